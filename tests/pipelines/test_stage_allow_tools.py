"""A stage's ``allow_tools``: while it is the current stage, any other tool is refused before
it runs; the next stage allows its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from phasegate import Pipeline, PipelineRunner, RunEvent
from phasegate.agents.retry import RetryPolicy
from phasegate.testing import Script, ScriptedAgent

TWO_STAGES: dict[str, Any] = {
    "name": "look-then-write",
    "stages": [
        {"name": "look", "prompt": "Read notes.md.", "allow_tools": ["Read"],
         "exit_when": [{"tools_used": ["Read"]}]},
        {"name": "write", "prompt": "Write spec.md.", "exit_when": [{"file_exists": "spec.md"}]},
    ],
}  # fmt: skip
WRITE = {"Write": {"file_path": "spec.md", "content": "the spec\n"}}
READ_NOTES = {"Read": {"file_path": "notes.md"}}


def test_a_write_in_a_reading_stage_is_refused_and_allowed_in_the_next(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("what the spec should say\n")
    script = Script.model_validate({"replies": [
        {"tools": [WRITE]},
        {"when": "tool_error", "tools": [READ_NOTES]},
        {"when": "tool_result", "text": "Read it."},
        {"when": "user", "tools": [WRITE]},
        {"when": "tool_result", "text": "Written."},
    ]})  # fmt: skip
    events: list[RunEvent] = []
    runner = PipelineRunner(
        ScriptedAgent(script), on_event=events.append, retry=RetryPolicy(session_retries=0)
    )
    report = runner.run_sync(Pipeline.model_validate(TWO_STAGES), tmp_path)

    assert report.verdict == "accepted"
    look, write = report.stages
    (refused,) = look.refusals
    assert refused.tool == "Write" and "stage 1 (look)" in refused.reason
    assert "allows Read" in refused.reason and write.refusals == []
    (event,) = [e.fields for e in events if e.event == "tool.refused"]
    assert (event["stage"], event["tool"]) == (1, "Write")
    (completed,) = [e.fields for e in events if e.event == "pipeline.completed"]
    assert completed["refusals"] == 1
    called = {e.fields["tool_use_id"] for e in events if e.event == "tool.called"}
    assert refused.tool_use_id not in called
    assert (tmp_path / "spec.md").read_text() == "the spec\n"  # written in stage 2 only


def test_a_stage_task_may_not_limit_tools_per_phase() -> None:
    """Not enforced per phase in a pipeline: refused when it loads, not silently ignored."""
    task = {
        "name": "t",
        "phases": [{"name": "p", "instructions": "Do it.", "allow_tools": ["Read"]}],
    }
    stage = {"name": "s", "task": task}
    with pytest.raises(ValueError, match="set allow_tools on the stage instead"):
        Pipeline.model_validate({"name": "p", "stages": [stage]})


def test_a_stage_may_only_allow_tools_the_pipeline_offers() -> None:
    look = {"name": "look", "prompt": "Look.", "allow_tools": ["Read", "Grep"],
            "exit_when": [{"file_exists": "notes.md"}]}  # fmt: skip
    pipeline = {"name": "p", "stages": [look], "toolset": ["Read"]}
    with pytest.raises(ValueError, match="allows Grep, which the toolset does not offer"):
        Pipeline.model_validate(pipeline)
