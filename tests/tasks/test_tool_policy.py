"""Phases enforced before a tool runs, with the scripted agent: a call the current phase does
not allow is refused (it does nothing, counts as no use of its tool, and is evidence), the
phase's marker moves the agent on, and a summary handed in too early is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from phasegate import RunEvent, Runner, Task
from phasegate.evidence.transcript import ToolRefused, ToolResult
from phasegate.testing import Script, ScriptedAgent
from tests.helpers.scenarios import (
    BUGGY_LINE,
    EDIT,
    FIXED,
    FOUND,
    GOOD_JSON,
    INVESTIGATE_THEN_FIX,
    NO_RETRIES,
    READ,
)


def _run(project: Path, replies: list[dict[str, Any]], **task: Any) -> tuple[Any, list[RunEvent]]:
    definition = Task.model_validate({**INVESTIGATE_THEN_FIX, **task})
    events: list[RunEvent] = []
    agent = ScriptedAgent(Script.model_validate({"replies": replies}))
    runner = Runner(agent, retry=NO_RETRIES, on_event=events.append)
    return runner.run_sync(definition, project), events


def test_an_edit_in_a_read_only_phase_is_refused_and_the_marker_moves_the_agent_on(
    project: Path,
) -> None:
    """The refused Edit changes nothing and is no use of Edit; printed in the same reply as
    the next Edit, the phase's marker lets that one run."""
    report, events = _run(
        project,
        [
            {"tools": [READ]},
            {"tools": [EDIT]},
            {"when": "tool_error", "text": FOUND, "tools": [EDIT]},
            {"when": "tool_result", "text": f"{FIXED}\n\n{GOOD_JSON}"},
        ],
    )
    assert report.verdict == "accepted", report.model_dump_json(indent=1)
    investigate, fix, _ = report.phases
    (refused,) = investigate.refusals
    assert (refused.tool, refused.input) == ("Edit", str(project.resolve() / "app.py"))
    assert "phase 1 (investigate)" in refused.reason and "Read, Grep, Glob" in refused.reason
    assert "PHASE 1 COMPLETE" in refused.reason  # what completes the phase
    assert investigate.tools == {"Read": 1} and investigate.tool_errors == 0
    assert fix.tools == {"Edit": 1} and fix.refusals == []
    transcript = report.transcript
    assert transcript is not None
    (entry,) = [e for e in transcript.entries if isinstance(e, ToolRefused)]
    result = transcript.results_by_call()[entry.tool_use_id]
    assert not result.ok and result.content == refused.reason
    (event,) = [e.fields for e in events if e.event == "tool.refused"]
    assert (event["phase"], event["tool"], event["tool_use_id"]) == (1, "Edit", entry.tool_use_id)
    called = [e.fields["tool_use_id"] for e in events if e.event == "tool.called"]
    assert entry.tool_use_id not in called  # it did not run
    closing = {e.event: e.fields for e in events if e.event in ("run.completed",)}
    assert closing["run.completed"]["refusals"] == 1


def test_a_refused_edit_leaves_the_file_as_it_was(project: Path) -> None:
    before = (project / "app.py").read_text()
    report, _ = _run(project, [{"tools": [EDIT]}, {"when": "tool_error", "text": "I stop."}])
    assert (project / "app.py").read_text() == before
    assert BUGGY_LINE in before
    assert report.verdict == "rejected"
    assert [r.tool for r in report.phases[0].refusals] == ["Edit"]


def test_submit_summary_before_the_work_is_refused_and_says_which_phase(project: Path) -> None:
    """With the completion tools the answer waits for every work phase."""
    summary = {"submit_summary": {"summary": {"files_changed": ["app.py"]}}}
    report, _ = _run(
        project,
        [{"tools": [summary]}, {"when": "tool_error", "text": "Giving up."}],
        completion="tool",
    )
    (refused,) = report.phases[0].refusals
    assert refused.tool == "mcp__phasegate__submit_summary"
    assert "phase 1 (investigate) is not complete" in refused.reason
    assert report.summary is None


def test_phases_without_allow_tools_ask_about_nothing(project: Path) -> None:
    """No policy, no refusals: the marker-mode task runs exactly as before."""
    phases = [{**p} for p in INVESTIGATE_THEN_FIX["phases"]]
    del phases[0]["allow_tools"]
    report, events = _run(
        project,
        [{"tools": [READ, EDIT]}, {"text": f"{FOUND}\n{FIXED}\n\n{GOOD_JSON}"}],
        phases=phases,
        completion="marker",
    )
    assert not any(p.refusals for p in report.phases)
    assert not [e for e in events if e.event == "tool.refused"]


@pytest.mark.parametrize("refused", [True, False])
def test_a_forbidden_call_that_ran_anyway_is_an_issue_and_a_refused_one_is_not(
    refused: bool,
) -> None:
    """A saved transcript could refuse nothing: the judge finds the call instead."""
    from phasegate.evidence.transcript import AssistantText, ToolCall, Transcript
    from phasegate.evidence.workspace import WorkspaceTimeline
    from phasegate.validators.judge import judge

    task = Task.model_validate(INVESTIGATE_THEN_FIX)
    call = ToolCall(id="t1", name="Edit", input={"file_path": "app.py"})
    entries: list[Any] = [call]
    if refused:
        entries.append(ToolRefused(tool_use_id="t1", name="Edit", reason="no", phase=1))
    entries += [ToolResult(tool_use_id="t1", ok=not refused), AssistantText(text=FOUND)]
    judgment = judge(task, Transcript(entries=tuple(entries)), WorkspaceTimeline(), workdir="/w")
    codes = {issue.code.value for issue in judgment.phases[0].issues}
    assert ("tool_not_allowed" in codes) is not refused
