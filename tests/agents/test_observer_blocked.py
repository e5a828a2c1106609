"""Each attempt to leave the sandbox is recorded as it shows, by the observer every run shares:
a ``blocked`` transcript entry right after what shows it and a ``sandbox.blocked`` event in
its phase (a task run) or stage (a pipeline run), and the report's list and the completion
event's count are those entries. The scripted agent has no sandbox, so ``sandbox: optional``
runs its commands unconfined while its file tools stay in the work directory; the real CLI's
sandbox is in ``test_claude_sandbox.py``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from phasegate import Pipeline, RunEvent, Task
from phasegate.evidence.transcript import Entry, SandboxBlocked, ToolRefused
from phasegate.recording.reading import read_recording
from phasegate.running import RunOptions, run_definition
from phasegate.testing import Script, ScriptedAgent

DONE = "PHASE 1 COMPLETE: done"


def _write(path: Path) -> dict[str, Any]:
    return {"Write": {"file_path": str(path), "content": "escaped"}}


def _run(
    definition: Task | Pipeline,
    work: Path,
    replies: list[dict[str, Any]],
    record: Path | None = None,
) -> tuple[Any, list[RunEvent]]:
    events: list[RunEvent] = []
    agent = ScriptedAgent(Script.model_validate({"replies": replies}))
    options = RunOptions(retries=0, on_event=events.append, record=record)
    return asyncio.run(run_definition(definition, work, agent, options)), events


def _blocked(entries: tuple[Entry, ...]) -> list[SandboxBlocked]:
    return [e for e in entries if isinstance(e, SandboxBlocked)]


def test_a_task_run_records_a_file_tool_refused_outside_as_it_is_refused(tmp_path: Path) -> None:
    work, outside = tmp_path / "work", tmp_path / "outside.txt"
    work.mkdir()
    task = Task.model_validate({"name": "t", "phases": [
        {"name": "one", "instructions": "One."}, {"name": "two", "instructions": "Two."},
    ], "sandbox": "optional"})  # fmt: skip
    replies: list[dict[str, Any]] = [
        {"text": DONE},
        {"when": "user", "tools": [_write(outside)]},
        {"when": "tool_error", "text": "PHASE 2 COMPLETE: done"},
    ]
    report, events = _run(task, work, replies)

    assert not outside.exists() and report.verdict == "accepted"
    entries = report.transcript.entries
    (entry,) = _blocked(entries)
    refusal = entries[entries.index(entry) - 1]
    assert isinstance(refusal, ToolRefused) and refusal.tool_use_id == entry.tool_use_id
    assert (entry.blocked, entry.tool, entry.target) == ("file_tool", "Write", str(outside))
    names = [e.event for e in events]
    assert names.index("sandbox.blocked") == names.index("tool.refused") + 1  # as it happens
    (event,) = [e.as_dict() for e in events if e.event == "sandbox.blocked"]
    assert (event["phase"], event["kind"], event["tool_use_id"], event["target"]) == (
        2, "file_tool", entry.tool_use_id, str(outside),
    )  # fmt: skip
    assert "stage" not in event
    (completed,) = [e.fields for e in events if e.event == "run.completed"]
    assert completed["blocked"] == len(report.blocked) == 1
    assert report.blocked[0].target == event["target"] and report.blocked[0].kind == "file_tool"


def test_a_pipeline_run_records_an_attempt_in_the_stage_it_was_made(tmp_path: Path) -> None:
    work, outside = tmp_path / "work", tmp_path / "outside.txt"
    work.mkdir()
    pipeline = Pipeline.model_validate({"name": "p", "sandbox": "optional", "stages": [
        {"name": "one", "prompt": "Write one.md.", "exit_when": [{"file_exists": "one.md"}]},
        {"name": "two", "prompt": "Write two.md.", "exit_when": [{"file_exists": "two.md"}]},
    ]})  # fmt: skip
    replies: list[dict[str, Any]] = [
        {"contains": "Stage 1 of 2", "tools": [{"Write": {"file_path": "one.md", "content": "1"}}]},
        {"when": "tool_result", "text": "One."},
        {"contains": "Stage 2 of 2", "tools": [_write(outside)]},
        {"when": "tool_error", "tools": [{"Write": {"file_path": "two.md", "content": "2"}}]},
        {"when": "tool_result", "text": "Two."},
    ]
    report, events = _run(pipeline, work, replies, record=tmp_path / "recording")

    assert not outside.exists() and report.verdict == "accepted"
    (entry,) = _blocked(read_recording(tmp_path / "recording").entries)
    (event,) = [e.as_dict() for e in events if e.event == "sandbox.blocked"]
    assert (event["stage"], event["kind"]) == (2, "file_tool")
    assert event["tool_use_id"] == entry.tool_use_id == report.blocked[0].tool_use_id
    assert "phase" not in event
    (completed,) = [e.fields for e in events if e.event == "pipeline.completed"]
    assert completed["blocked"] == len(report.blocked) == 1


def test_a_run_that_asked_for_no_sandbox_records_no_attempt(tmp_path: Path) -> None:
    """Unconfined, the write outside is the runtime's own error, not the sandbox's doing."""
    work, outside = tmp_path / "work", tmp_path / "outside.txt"
    work.mkdir()
    task = Task.model_validate({"name": "t", "phases": [{"name": "one", "instructions": "One."}]})
    report, events = _run(task, work, [
        {"tools": [_write(outside)]}, {"when": "tool_error", "text": DONE},
    ])  # fmt: skip
    assert _blocked(report.transcript.entries) == [] and report.blocked == ()
    assert "sandbox.blocked" not in {e.event for e in events}
    (completed,) = [e.fields for e in events if e.event == "run.completed"]
    assert completed["blocked"] == 0
