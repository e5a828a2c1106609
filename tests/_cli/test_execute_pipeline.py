"""`phasegate execute` runs a planned pipeline as it runs a planned task: the values filled
into the stage prompts, progress lines per stage, one result line."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from phasegate.phases.pipeline import load_pipeline
from phasegate.planning.reference import plan_task
from tests.helpers.cli import phasegate

PIPELINE = {
    "name": "notes",
    "stages": [{"name": "write", "prompt": "Write notes.md for the {{ team }} team.",
                "exit_when": [{"file_exists": "notes.md"}]}],
    "inputs": [{"id": "team", "question": "Which team?", "header": "Team"}],
}  # fmt: skip


def test_a_planned_pipeline_runs_with_its_values_and_reports_per_stage(tmp_path: Path) -> None:
    pipeline = tmp_path / "pipeline.yaml"
    pipeline.write_text(yaml.safe_dump(PIPELINE))
    work = tmp_path / "work"
    work.mkdir()
    plan = tmp_path / "plan.json"
    plan.write_text(plan_task(load_pipeline(pipeline), work).to_json())
    script = tmp_path / "model.yaml"
    script.write_text(yaml.safe_dump({"replies": [
        {"contains": "for the core team",
         "tools": [{"Write": {"file_path": "notes.md", "content": "core\n"}}]},
        {"text": "Done."},
    ]}))  # fmt: skip
    done = phasegate("execute", pipeline, "--workdir", work, "--plan", plan, "--responses",
                     '{"team": "core"}', "--agent", "scripted", "--script", script)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    *progress, result = [json.loads(line) for line in done.stdout.splitlines()]
    assert result["success"] is True and result["message"] == "notes: every stage accepted"
    assert result["created_files"] == ["notes.md"]
    checked = [line for line in progress if line["event"] == "stage.checked"]
    assert checked[-1]["stage"] == "write" and checked[-1]["accepted"] is True
    assert progress[-1]["percent"] == 100
