"""A pipeline with branches run over HTTP: a real service, the real CLI, offline; its event
stream says which branch each stage event is about."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.helpers.branches import branch_stage, branch_work
from tests.helpers.service import events, running_service

pytestmark = pytest.mark.cli


def test_a_pipeline_with_branches_runs_over_http_and_streams_each_events_branch(
    root: Path,
) -> None:
    stages = [branch_stage("plan"), branch_stage("a", ["plan"]), branch_stage("b", ["plan"])]
    stages.append(branch_stage("join", ["a", "b"]))
    pipeline = {"name": "fan", "stages": stages}
    (root / "fan.yaml").write_text(yaml.safe_dump(pipeline))
    replies = [
        *branch_work(None, "plan"),
        *branch_work("a", "a"),
        *branch_work("b", "b"),
        *branch_work("a", "join"),
    ]
    (root / "scripts" / "fan.yaml").write_text(yaml.safe_dump({"replies": replies}))
    (root / "fan-work").mkdir()
    with running_service(root, "--model-script", root / "scripts" / "fan.yaml") as service:
        client = service.client()
        run = service.start_run(client, pipeline="fan.yaml", workdir="fan-work")
        streamed = events(client, run["id"])
        finished = client.get(f"/v1/runs/{run['id']}").json()
    assert (finished["status"], finished["verdict"]) == ("finished", "accepted")
    assert sorted(p.name for p in (root / "fan-work").glob("*.txt")) == [
        "a.txt", "b.txt", "join.txt", "plan.txt"
    ]  # fmt: skip
    started = [e.json for e in streamed if e.event == "stage.started"]
    assert {(s["name"], s["stage"], s["branch"]) for s in started} == {
        ("plan", 1, "plan"), ("a", 2, "a"), ("b", 3, "b"), ("join", 4, "a")
    }  # fmt: skip
    names = [e.event for e in streamed]
    assert names.count("pipeline.started") == 1 and names.count("pipeline.completed") == 1
    assert json.loads(json.dumps(finished["report"]["branches"]))[0]["first"] == "plan"
