"""``phasegate batch run`` of a pipeline with branches: the real Claude Code CLI against the
scripted model server, a unit process per item, the branches forked inside it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.helpers.branches import branch_stage, branch_work
from tests.helpers.cli import phasegate

pytestmark = pytest.mark.cli


def test_a_batch_runs_a_pipeline_with_branches_at_the_bound_it_is_given(tmp_path: Path) -> None:
    stages = [branch_stage("plan"), branch_stage("a", ["plan"]), branch_stage("b", ["plan"])]
    stages.append(branch_stage("join", ["a", "b"]))
    (tmp_path / "fan.yaml").write_text(yaml.safe_dump({"name": "fan", "stages": stages}))
    replies = [
        *branch_work(None, "plan"),
        *branch_work("a", "a"),
        *branch_work("b", "b"),
        *branch_work("a", "join"),
    ]
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
