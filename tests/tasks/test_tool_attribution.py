"""One attribution of tool calls to phases: the ``tool.called`` events name the phase the run
report counts each call under, however the claims fall."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from phasegate import AgentObserver, AgentRequest, RunEvent, Runner, RunReport, Task
from phasegate.evidence.transcript import (
    AssistantText,
    RunResult,
    SessionStart,
    ToolCall,
    ToolResult,
)
from phasegate.testing import ScriptedAgent, load_script
from tests.helpers.scenarios import BUGGY_LINE, EDIT, EXAMPLE, FIXED_LINE, GOOD_JSON, MARKER, READ

RunScript = Callable[..., RunReport]


def _from_events(events: list[RunEvent]) -> Counter[tuple[int, str]]:
    """(phase, tool) of every successful call, as the tool.called events name them."""
    called = [e.fields for e in events if e.event == "tool.called"]
    assert len({f["tool_use_id"] for f in called}) == len(called)  # one event per call
    return Counter((f["phase"], f["tool"]) for f in called if f["ok"])


def _from_report(report: RunReport) -> Counter[tuple[int, str]]:
    """(phase, tool) of every successful call, as the report's phases count them."""
    return Counter(
        {
            (phase.index, tool): count
            for phase in report.phases
            for tool, count in phase.tools.items()
        }
    )


def test_the_lazy_example_model_s_edits_are_phase_1_in_events_and_report(
    task: Task, project: Path, events: list[RunEvent]
) -> None:
    """Claimed early, fixed after feedback, claimed again: the edits belong to phase 1."""
    runner = Runner(ScriptedAgent(load_script(EXAMPLE / "model.yaml")), on_event=events.append)
    report = runner.run_sync(task, project)
    assert report.verdict == "accepted"
    assert _from_events(events) == _from_report(report) == {(1, "Read"): 1, (1, "Edit"): 2}


@pytest.mark.parametrize(
    ("replies", "mode"),
    [
        (  # the model corrects itself, no feedback: edit after a premature claim, claim again
            [
                {"text": MARKER, "tools": [READ]},
                {"when": "tool_result", "tools": [EDIT]},
                {"when": "tool_result", "text": f"{MARKER}\n\n{GOOD_JSON}"},
            ],
            "single-query",
        ),
        (  # edits after feedback, stops without claiming, claims only after more feedback
            [
                {"text": MARKER},
                {"when": "user", "tools": [EDIT]},
                {"when": "tool_result", "text": "Edited."},
                {"when": "user", "text": f"{MARKER}\n\n{GOOD_JSON}"},
            ],
            "gate",
        ),
        (  # never claims again: the edit stays in phase 2, where the report has it too
            [{"text": MARKER}, {"when": "user", "tools": [EDIT]}, {"text": GOOD_JSON}],
            "gate",
        ),
    ],
    ids=["self-corrected", "claimed-after-a-later-stop", "never-claimed-again"],
)
def test_events_and_report_agree_on_each_call_s_phase(
    run_script: RunScript, events: list[RunEvent], replies: list[dict[str, Any]], mode: str
) -> None:
    """Whatever the order of claims, stops and feedback."""
    report = run_script(replies, mode=mode)
    assert _from_events(events) == _from_report(report)
    assert sum(_from_report(report).values()) >= 1


class _EditThenMarkerInOneMessage:
    """An agent whose one message holds an Edit call and then the marker: the runtime runs
    the tool after the message, so the result arrives after the marker."""

    name = "one-message"

    async def run(self, request: AgentRequest, observer: AgentObserver) -> None:
        if request.resume is not None:  # feedback: nothing more to say
            observer.on_entry(RunResult(subtype="success", num_turns=1, duration_ms=0))
            return
        path = request.workdir / "app.py"
        edit = {"file_path": str(path), "old_string": BUGGY_LINE, "new_string": FIXED_LINE}
        observer.on_entry(SessionStart(cwd=str(request.workdir), session_id="s"))
        observer.on_entry(ToolCall(id="toolu_1", name="Edit", input=edit))
        observer.on_entry(AssistantText(text=MARKER))
        path.write_text(path.read_text().replace(BUGGY_LINE, FIXED_LINE))
        observer.on_entry(ToolResult(tool_use_id="toolu_1", ok=True, content="updated"))
        observer.on_entry(AssistantText(text=GOOD_JSON))
        await observer.on_stop()
        observer.on_entry(RunResult(subtype="success", num_turns=1, duration_ms=0))


def test_an_edit_called_before_the_marker_in_the_same_message_is_phase_1_in_both(
    task: Task, project: Path, events: list[RunEvent]
) -> None:
    """A call belongs where it was made, not where its result arrived."""
    runner = Runner(_EditThenMarkerInOneMessage(), mode="single-query", on_event=events.append)
    report = runner.run_sync(task, project)
    assert _from_events(events) == _from_report(report) == {(1, "Edit"): 1}


def test_a_call_goes_out_at_once_unless_an_earlier_phase_may_still_take_it(
    task: Task, project: Path, events: list[RunEvent]
) -> None:
    """The Read of phase 1 is reported as it returns; the edits made after the premature
    claim wait for the claim that settles them, and come before it."""
    runner = Runner(ScriptedAgent(load_script(EXAMPLE / "model.yaml")), on_event=events.append)
    runner.run_sync(task, project)
    order = [(e.event, e.fields.get("tool")) for e in events]
    first_marker = order.index(("phase.marker", None))
    second_marker = order.index(("phase.marker", None), first_marker + 1)
    assert order.index(("tool.called", "Read")) < first_marker
    edits = [i for i, item in enumerate(order) if item == ("tool.called", "Edit")]
    assert order.index(("phase.gate", None)) < edits[0] and edits[-1] < second_marker
