"""Completion tool calls judged at call time (PhaseGate.answer_tool), with no agent: the
transcript (already holding the call) and the workspace timeline are built by hand."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from phasegate.evidence.transcript import (
    AssistantText,
    Entry,
    ToolCall,
    ToolResult,
    Transcript,
    UserText,
)
from phasegate.evidence.workspace import WorkspaceTimeline
from phasegate.modes import Mode
from phasegate.phases.completion import PHASE_COMPLETE_TOOL, SUBMIT_SUMMARY_TOOL, full_tool_name
from phasegate.phases.model import Phase, Task
from phasegate.tasks.gate import PhaseGate, ToolCheck

WORKDIR = "/srv/project"
APP = f"{WORKDIR}/app.py"
GOOD = {"files_changed": ["app.py"], "description": "Replaced eval with ast.literal_eval."}
BEFORE = {"app.py": "h1"}
AFTER = {"app.py": "h2"}
MARKER_1 = "PHASE 1 COMPLETE: Files have been edited"
ANSWER_KEYS = ["result", "attempted", "action"]
FAILED_KEYS = ["result", "attempted", "issues", "issue_count", "action"]
ERROR_KEYS = ["result", "attempted", "error", "action"]

TranscriptOf = Callable[..., Transcript]
ToolPair = Callable[..., tuple[ToolCall, ToolResult]]
TimelineOf = Callable[..., WorkspaceTimeline]


def pending(name: str, **tool_input: Any) -> ToolCall:
    """A completion tool call the runtime is waiting on: no result yet."""
    return ToolCall(id=f"toolu_{name[-6:]}_{len(tool_input)}", name=name, input=tool_input)


Ask = Callable[..., ToolCheck]


@pytest.fixture
def ask(make_transcript: TranscriptOf, make_timeline: TimelineOf) -> Ask:
    """``ask(gate, "phase_complete", {"phase": 1}, *before, changed=True)``: the call judged
    with ``before`` and then the pending call in the transcript, and the disk as it was at the
    start, then (when ``changed`` is given) changed or not by the time of the call."""

    def run(
        gate: PhaseGate,
        name: str,
        arguments: dict[str, Any],
        *before: Entry | tuple[ToolCall, ToolResult],
        changed: bool | None = None,
    ) -> ToolCheck:
        transcript = make_transcript(*before, pending(full_tool_name(name), **arguments))
        points = [(0, BEFORE)]
        if changed is not None:
            points.append((len(transcript), AFTER if changed else BEFORE))
        return gate.answer_tool(name, arguments, transcript, make_timeline(*points))

    return run


def issue_codes(data: dict[str, Any]) -> list[tuple[str, int, str]]:
    """(group, phase, code) of every issue of a validation_failed answer, in order."""
    return [
        (group, item["phase"], item["code"])
        for group, items in data["issues"].items()
        for item in items
    ]


# ---- phase_complete ------------------------------------------------------------------------


def test_phase_complete_succeeds_when_phases_up_to_it_pass_whatever_comes_later(
    three_phase_task: Task, tool_pair: ToolPair, ask: Ask
) -> None:
    """Phase 1 has its Edit and its change; phases 2 and 3 are not done yet and do not count."""
    gate = PhaseGate(three_phase_task, workdir=WORKDIR)

    check = ask(
        gate,
        "phase_complete",
        {"phase": 1, "note": "edited"},
        UserText(text="prompt"),
        tool_pair("Edit", file_path=APP),
        changed=True,
    )

    assert check.answer.ok
    assert list(check.answer.data) == ANSWER_KEYS
    assert check.answer.data == {
        "result": "success",
        "attempted": {"tool": "phase_complete", "phase": 1, "note": "edited"},
        "action": "Phase 1 is complete. Go on with phase 2 (verify): do its work, then call "
        "phase_complete(phase=2, note=...) (or print 'PHASE 2 COMPLETE: Tests pass').",
    }
    assert check.judgment is not None
    assert [p.accepted for p in check.judgment.phases] == [True, False, False]
    assert check.judgment.phases[0].completed_by == "tool"
    assert gate.attempts == 0  # a tool check is not a stop check


def test_a_quoted_phase_number_is_judged_like_the_number(
    fix_task: Task, tool_pair: ToolPair, ask: Ask
) -> None:
    """phase="1" is phase 1, in the answer's echo as given."""
    gate = PhaseGate(fix_task, workdir=WORKDIR)

    check = ask(
        gate, "phase_complete", {"phase": "1"}, tool_pair("Edit", file_path=APP), changed=True
    )

    assert check.answer.data["result"] == "success"
    assert check.answer.data["attempted"] == {"tool": "phase_complete", "phase": "1"}


def test_phase_complete_without_the_work_is_validation_failed_with_grouped_issues(
    three_phase_task: Task, tool_pair: ToolPair, ask: Ask
) -> None:
    """No Edit and no change: phase 1's issues in ADR-007 groups, the later phases' left out,
    and an action that points forward."""
    gate = PhaseGate(three_phase_task, workdir=WORKDIR)

    check = ask(
        gate,
        "phase_complete",
        {"phase": 1},
        UserText(text="prompt"),
        tool_pair("Read", file_path=APP),
        changed=False,
    )

    data = check.answer.data
    assert not check.answer.ok
    assert list(data) == FAILED_KEYS
    assert (data["result"], data["attempted"]) == (
        "validation_failed", {"tool": "phase_complete", "phase": 1}
    )  # fmt: skip
    assert issue_codes(data) == [("missing", 1, "tool_not_used"), ("missing", 1, "no_changes")]
    assert data["issue_count"] == 2
    assert data["action"] == (
        "Continue with phase 1 (edit): resolve its issues above; then call "
        "phase_complete(phase=1, note=...) (or print 'PHASE 1 COMPLETE: Files have been edited'); "
        "then do phase(s) 2 (verify) in order, completing each the same way; then give the "
        "answer of phase 3 (summary): call submit_summary(summary=...) with the object or print "
        "the object in a ```json block."
    )
    assert check.judgment is not None
    assert len(check.judgment.issues) > 2  # phase 3's json_missing exists, but is not listed


def test_phase_complete_lists_the_issues_of_every_phase_up_to_it_and_no_later(
    three_phase_task: Task, tool_pair: ToolPair, ask: Ask
) -> None:
    """Completing phase 2 with phase 1 never completed: both phases' issues, not phase 3's."""
    gate = PhaseGate(three_phase_task, workdir=WORKDIR)

    check = ask(
        gate,
        "phase_complete",
        {"phase": 2},
        tool_pair("Edit", file_path=APP),
        tool_pair("Bash", command="pytest"),
        changed=True,
    )

    assert issue_codes(check.answer.data) == [
        ("missing", 1, "marker_missing"),
        ("missing", 2, "tool_not_used"),
    ]


# ---- submit_summary ------------------------------------------------------------------------


def test_submit_summary_succeeds_when_every_phase_passes_and_echoes_only_field_names(
    fix_task: Task, tool_pair: ToolPair, ask: Ask
) -> None:
    """The answer's values are not repeated back, only which fields it had."""
    gate = PhaseGate(fix_task, workdir=WORKDIR)

    check = ask(
        gate,
        "submit_summary",
        {"summary": GOOD},
        tool_pair("Edit", file_path=APP),
        tool_pair(PHASE_COMPLETE_TOOL, phase=1),
        changed=True,
    )

    assert check.answer.data == {
        "result": "success",
        "attempted": {"tool": "submit_summary", "summary_fields": ["description", "files_changed"]},
        "action": "The answer is accepted and every phase is complete. End your turn now.",
    }
    assert "literal_eval" not in check.answer.text
    assert check.judgment is not None
    assert check.judgment.accepted
    assert check.judgment.output == GOOD


def test_submit_summary_judges_every_phase_not_just_the_answer(
    fix_task: Task, tool_pair: ToolPair, ask: Ask
) -> None:
    """A flawless answer after an edit phase that was never completed is still rejected."""
    gate = PhaseGate(fix_task, workdir=WORKDIR)

    check = ask(
        gate, "submit_summary", {"summary": GOOD}, tool_pair("Edit", file_path=APP), changed=True
    )

    assert check.answer.data["result"] == "validation_failed"
    assert issue_codes(check.answer.data) == [
        ("invalid", 2, "json_before_marker"),
        ("missing", 1, "marker_missing"),
    ]


@pytest.mark.parametrize(
    ("arguments", "fields"),
    [({}, None), ({"summary": "not an object"}, None), ({"summary": {"b": 1, "a": 2}}, ["a", "b"])],
    ids=["missing", "string", "object"],
)
def test_submit_summary_echoes_sorted_field_names_or_none(
    fix_task: Task, ask: Ask, arguments: dict[str, Any], fields: list[str] | None
) -> None:
    """Only a summary object has field names to echo."""
    check = ask(PhaseGate(fix_task, workdir=WORKDIR), "submit_summary", arguments)

    assert check.answer.data["attempted"] == {"tool": "submit_summary", "summary_fields": fields}


# ---- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "got"),
    [
        ({"phase": 2}, "2"),
        ({"phase": 0}, "0"),
        ({"phase": "one"}, "'one'"),
        ({"phase": True}, "True"),
        ({"phase": 1.0}, "1.0"),
        ({"phase": "²"}, "'²'"),
        ({"note": "done"}, "None"),
    ],
    ids=["output-phase", "zero", "word", "bool", "float", "superscript-digit", "missing"],
)
def test_a_phase_complete_call_without_a_work_phase_number_is_an_error(
    fix_task: Task, ask: Ask, arguments: dict[str, Any], got: str
) -> None:
    """The call is not judged, says which numbers are valid, and costs no attempt."""
    gate = PhaseGate(fix_task, workdir=WORKDIR)

    check = ask(gate, "phase_complete", arguments)

    assert check.judgment is None
    assert not check.answer.ok
    assert list(check.answer.data) == ERROR_KEYS
    assert check.answer.data == {
        "result": "error",
        "attempted": {"tool": "phase_complete", **arguments},
        "error": f"phase must be the number of a work phase (1); got {got}",
        "action": "Call it with a valid phase number, then go on.",
    }
    assert (gate.phase_attempts(1), gate.phase_attempts(2)) == (0, 0)


def test_submit_summary_on_a_task_without_an_output_phase_is_an_error(ask: Ask) -> None:
    """There is no answer to judge."""
    task = Task(name="t", completion="tool", phases=(Phase(name="a", instructions="x"),))

    check = ask(PhaseGate(task, workdir=WORKDIR), "submit_summary", {"summary": {}})

    assert check.judgment is None
    assert (check.answer.data["result"], check.answer.data["error"]) == (
        "error", "this task has no output phase"
    )  # fmt: skip


def test_a_tool_that_is_not_a_completion_tool_is_an_error(
    fix_task: Task, make_transcript: TranscriptOf, make_timeline: TimelineOf
) -> None:
    """Only the two short names are answered."""
    gate = PhaseGate(fix_task, workdir=WORKDIR)

    check = gate.answer_tool("Bash", {"phase": 1}, make_transcript(), make_timeline())

    assert check.answer.data["error"] == "Bash is not a phasegate completion tool"


def test_after_max_attempts_rejected_calls_a_phase_is_no_longer_judged(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair, make_timeline: TimelineOf
) -> None:
    """Two rejected phase_complete(1) calls spend phase 1's budget of 2; the third call is an
    error, while the output phase keeps its own budget."""
    gate = PhaseGate(fix_task, workdir=WORKDIR, max_attempts=2)
    calls = [tool_pair(PHASE_COMPLETE_TOOL, ok=False, phase=1) for _ in range(2)]
    timeline = make_timeline((0, BEFORE))

    results = []
    for seen in range(1, 4):
        transcript = make_transcript(*calls[: seen - 1], pending(PHASE_COMPLETE_TOOL, phase=1))
        results.append(gate.answer_tool("phase_complete", {"phase": 1}, transcript, timeline))

    assert [r.answer.data["result"] for r in results] == [
        "validation_failed", "validation_failed", "error"
    ]  # fmt: skip
    assert results[2].judgment is None
    assert results[2].answer.data["error"] == "phase 1 has used its 2 checks"
    assert results[2].answer.data["action"] == (
        "Do not call the completion tools again; end your turn."
    )
    transcript = make_transcript(*calls, pending(SUBMIT_SUMMARY_TOOL, summary=GOOD))
    submitted = gate.answer_tool("submit_summary", {"summary": GOOD}, transcript, timeline)
    assert submitted.answer.data["result"] == "validation_failed"


# ---- modes and attempts --------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["single-query", "unstructured"])
def test_outside_gate_mode_a_call_is_only_recorded(fix_task: Task, ask: Ask, mode: Mode) -> None:
    """Nothing is judged at call time; the claim is judged once, when the run ends."""
    gate = PhaseGate(fix_task, workdir=WORKDIR, mode=mode)

    check = ask(gate, "phase_complete", {"phase": 1, "note": "n"})

    assert check.judgment is None
    assert check.answer.ok
    assert check.answer.data == {
        "result": "recorded",
        "attempted": {"tool": "phase_complete", "phase": 1, "note": "n"},
        "action": "Noted; it is judged when the run ends. Go on with the next phase.",
    }
    bad = ask(gate, "phase_complete", {"phase": 9})
    assert bad.answer.data["result"] == "error"


def test_rejected_tool_checks_count_as_attempts_of_their_phases(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair, make_timeline: TimelineOf
) -> None:
    """A premature phase_complete, then the edit and an accepted run: phase 1 took two checks,
    the output phase one; the run itself had one stop check."""
    gate = PhaseGate(fix_task, workdir=WORKDIR)
    first = pending(PHASE_COMPLETE_TOOL, phase=1)
    rejected = gate.answer_tool(
        "phase_complete",
        {"phase": 1},
        make_transcript(UserText(text="prompt"), first),
        make_timeline((0, BEFORE), (2, BEFORE)),
    )
    assert rejected.answer.data["result"] == "validation_failed"

    transcript = make_transcript(
        UserText(text="prompt"),                                        # 0
        first,                                                          # 1
        ToolResult(tool_use_id=first.id, ok=False, content="failed"),   # 2
        tool_pair("Edit", file_path=APP),                               # 3, 4
        AssistantText(text=MARKER_1),                                   # 5
        tool_pair(SUBMIT_SUMMARY_TOOL, summary=GOOD),                   # 6, 7
    )  # fmt: skip
    decision = gate.check(transcript, make_timeline((0, BEFORE), (2, BEFORE), (8, AFTER)))

    assert decision.judgment.accepted, decision.judgment.issues
    assert (gate.phase_attempts(1), gate.phase_attempts(2)) == (2, 1)
    assert gate.attempts == 1
