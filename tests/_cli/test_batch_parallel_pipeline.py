"""``phasegate batch run`` of a pipeline with branches: the real Claude Code CLI against the
scripted model server, a unit process per item, the branches forked inside it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers.cli import phasegate

pytestmark = pytest.mark.cli


def _stage(name: str, needs: list[str] | None = None) -> dict[str, Any]:
    stage: dict[str, Any] = {"name": name, "prompt": f"Write {name}.md.",
                             "exit_when": [{"file_exists": f"{name}.md"}]}  # fmt: skip
    return stage if needs is None else {**stage, "needs": needs}


def _work(branch: str | None, name: str) -> list[dict[str, Any]]:
    key = {"branch": branch} if branch else {}
    write = {"Write": {"file_path": f"{name}.md", "content": f"{name}\n"}}
    return [{**key, "tools": [write]}, {**key, "text": f"{name} done."}]


def test_a_batch_runs_a_pipeline_with_branches_at_the_bound_it_is_given(tmp_path: Path) -> None:
    stages = [_stage("plan"), _stage("a", ["plan"]), _stage("b", ["plan"])]
    stages.append(_stage("join", ["a", "b"]))
    (tmp_path / "fan.yaml").write_text(yaml.safe_dump({"name": "fan", "stages": stages}))
    replies = [*_work(None, "plan"), *_work("a", "a"), *_work("b", "b"), *_work("a", "join")]
    (tmp_path / "model.yaml").write_text(yaml.safe_dump({"replies": replies}))
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "README.md").write_text("a project\n")
    item = {"pipeline": "fan.yaml", "workdir": {"copy": "project"}, "model_script": "model.yaml"}
    batch = tmp_path / "batch.yaml"
    batch.write_text(yaml.safe_dump({"items": [item]}))
    out = tmp_path / "out"
    done = phasegate("batch", "run", batch, "--out", out, "--max-parallel", "2", "--quiet")
    assert done.returncode == 0, done.stderr
    (unit,) = [p for p in (out / "units").iterdir() if not p.name.startswith(".")]
    report = json.loads((unit / "report.json").read_text())
    assert report["verdict"] == "accepted", report.get("error")
    assert [s["status"] for s in report["stages"]] == ["accepted"] * 4
    assert [b["first"] for b in report["branches"]] == ["plan", "a", "b", "join"]
    lines = [json.loads(line) for line in (unit / "events.jsonl").read_text().splitlines()]
    branches = {(e["name"], e.get("branch")) for e in lines if e["event"] == "stage.completed"}
    assert branches == {("plan", "plan"), ("a", "a"), ("b", "b"), ("join", "a")}
