"""A pipeline with branches run over HTTP: a real service, the real CLI, offline; its event
stream says which branch each stage event is about."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers.service import events, running_service

pytestmark = pytest.mark.cli


def _stage(name: str, needs: list[str] | None = None) -> dict[str, Any]:
    stage: dict[str, Any] = {"name": name, "prompt": f"Write {name}.md.",
                             "exit_when": [{"file_exists": f"{name}.md"}]}  # fmt: skip
    return stage if needs is None else {**stage, "needs": needs}


def _work(branch: str | None, name: str) -> list[dict[str, Any]]:
    key = {"branch": branch} if branch else {}
    write = {"Write": {"file_path": f"{name}.md", "content": f"{name}\n"}}
    return [{**key, "tools": [write]}, {**key, "text": f"{name} done."}]


def test_a_pipeline_with_branches_runs_over_http_and_streams_each_events_branch(
    root: Path,
) -> None:
    stages = [_stage("plan"), _stage("a", ["plan"]), _stage("b", ["plan"])]
    stages.append(_stage("join", ["a", "b"]))
    pipeline = {"name": "fan", "stages": stages}
    (root / "fan.yaml").write_text(yaml.safe_dump(pipeline))
    replies = [*_work(None, "plan"), *_work("a", "a"), *_work("b", "b"), *_work("a", "join")]
    (root / "scripts" / "fan.yaml").write_text(yaml.safe_dump({"replies": replies}))
    (root / "fan-work").mkdir()
    with running_service(root, "--model-script", root / "scripts" / "fan.yaml") as service:
        client = service.client()
        run = service.start_run(client, pipeline="fan.yaml", workdir="fan-work")
        streamed = events(client, run["id"])
        finished = client.get(f"/v1/runs/{run['id']}").json()
    assert (finished["status"], finished["verdict"]) == ("finished", "accepted")
    assert sorted(p.name for p in (root / "fan-work").glob("*.md")) == [
        "a.md", "b.md", "join.md", "plan.md"
    ]  # fmt: skip
    started = [e.json for e in streamed if e.event == "stage.started"]
    assert {(s["name"], s["stage"], s["branch"]) for s in started} == {
        ("plan", 1, "plan"), ("a", 2, "a"), ("b", 3, "b"), ("join", 4, "a")
    }  # fmt: skip
    names = [e.event for e in streamed]
    assert names.count("pipeline.started") == 1 and names.count("pipeline.completed") == 1
    assert json.loads(json.dumps(finished["report"]["branches"]))[0]["first"] == "plan"
