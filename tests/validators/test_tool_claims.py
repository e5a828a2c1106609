"""Completion claimed by a tool call (phasegate.validators.windows and .judge).

A ``phase_complete`` call is a completion claim like a marker line; the task's ``completion``
mode decides which of the two count, and the output phase's answer follows the same mode.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from phasegate.evidence.transcript import AssistantText, ToolCall, ToolResult, Transcript, UserText
from phasegate.evidence.workspace import WorkspaceTimeline
from phasegate.phases.completion import (
    PHASE_COMPLETE_TOOL,
    STRUCTURED_OUTPUT_TOOL,
    SUBMIT_SUMMARY_TOOL,
    Completion,
)
from phasegate.phases.model import Task
from phasegate.validators.issues import IssueCode
from phasegate.validators.judge import Judgment, judge
from phasegate.validators.windows import CompletionClaim, PhaseWindow, find_claims, phase_windows
from phasegate.validators.windows import tool_claim as claim_of

WORKDIR = "/srv/project"
APP = f"{WORKDIR}/app.py"
MARKER_1 = "PHASE 1 COMPLETE: Files have been edited"
GOOD = {"files_changed": ["app.py"], "description": "Replaced eval with ast.literal_eval."}
BEFORE = {"app.py": "h1"}
AFTER = {"app.py": "h2"}

TranscriptOf = Callable[..., Transcript]
ToolPair = Callable[..., tuple[ToolCall, ToolResult]]
TimelineOf = Callable[..., WorkspaceTimeline]


def in_mode(task: Task, completion: Completion) -> Task:
    """``task`` with another completion mode."""
    return task.model_copy(update={"completion": completion})


def call(name: str = PHASE_COMPLETE_TOOL, **tool_input: Any) -> ToolCall:
    """A bare tool call (no result needed for a claim)."""
    return ToolCall(id="toolu_x", name=name, input=tool_input)


def spans(windows: list[PhaseWindow]) -> list[tuple[int, int, int | None]]:
    """(start, end, marker_at) of each window, for compact assertions."""
    return [(w.start, w.end, w.marker_at) for w in windows]


def fenced(value: object) -> str:
    """``value`` in a ```json block."""
    return f"```json\n{json.dumps(value, indent=2)}\n```"


def phase_codes(judgment: Judgment) -> list[list[IssueCode]]:
    """The issue codes of each phase, in phase order."""
    return [[issue.code for issue in phase.issues] for phase in judgment.phases]


# ---- tool_claim ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("phase", "expected"),
    [(1, 1), (2, 2), ("1", 1), (" 2 ", 2)],
    ids=["int", "int-2", "digit-string", "padded-digit-string"],
)
def test_a_phase_complete_call_with_an_int_or_digit_string_phase_is_a_claim(
    three_phase_task: Task, phase: object, expected: int
) -> None:
    """Models sometimes quote the number; both forms claim the work phase they name."""
    claim = claim_of(three_phase_task, call(phase=phase, note="  edited app.py  "), 7)

    assert claim == CompletionClaim(
        position=7, index=expected, line=0, source="tool", text="edited app.py"
    )


@pytest.mark.parametrize(
    "phase",
    [True, False, 1.0, None, "one", "", "-1", [1], {"n": 1}, "²", "9" * 5000],
    ids=[
        "true", "false", "float", "none", "word", "empty", "negative", "list", "dict",
        "superscript-digit", "huge-digit-string",
    ],
)  # fmt: skip
def test_a_phase_that_is_not_an_int_or_digit_string_is_no_claim(
    three_phase_task: Task, phase: object
) -> None:
    """Bools are not numbers here, and strings that int() would refuse never raise."""
    assert claim_of(three_phase_task, call(phase=phase), 0) is None


def test_a_call_without_a_phase_argument_is_no_claim(three_phase_task: Task) -> None:
    """``phase`` is the whole point of the call; without it nothing is claimed."""
    assert claim_of(three_phase_task, call(note="done"), 0) is None


@pytest.mark.parametrize(
    "phase", [0, 3, 4, "3"], ids=["zero", "output-phase", "past-the-end", "output-as-string"]
)
def test_a_phase_complete_call_naming_no_work_phase_is_no_claim(
    three_phase_task: Task, phase: object
) -> None:
    """Only work phases are claimed this way; the output phase answers with submit_summary."""
    assert claim_of(three_phase_task, call(phase=phase), 0) is None


@pytest.mark.parametrize(
    "name",
    ["phase_complete", "mcp__other__phase_complete", SUBMIT_SUMMARY_TOOL, "Bash"],
    ids=["short-name", "other-server", "submit-summary", "bash"],
)
def test_only_phasegates_own_phase_complete_tool_makes_a_claim(
    three_phase_task: Task, name: str
) -> None:
    """The runtime reports the full MCP name; anything else with a phase argument is no claim."""
    assert claim_of(three_phase_task, call(name, phase=1), 0) is None


def test_a_note_that_is_not_a_string_gives_an_empty_claim_text(three_phase_task: Task) -> None:
    """The note is decoration: a missing or odd note does not void the claim."""
    claim = claim_of(three_phase_task, call(phase=1, note=["x"]), 0)

    assert claim is not None
    assert (claim.index, claim.text) == (1, "")


# ---- find_claims ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        ("marker", [("marker", 0, 1)]),
        ("tool", [("tool", 1, 1)]),
        ("either", [("marker", 0, 1), ("tool", 1, 1)]),
    ],
)
def test_find_claims_counts_only_what_the_completion_mode_allows(
    fix_task: Task,
    make_transcript: TranscriptOf,
    tool_pair: ToolPair,
    completion: Completion,
    expected: list[tuple[str, int, int]],
) -> None:
    """marker: typed lines only; tool: phase_complete calls only; either: both, in order."""
    transcript = make_transcript(
        AssistantText(text=MARKER_1), tool_pair(PHASE_COMPLETE_TOOL, phase=1, note="edited")
    )

    claims = find_claims(in_mode(fix_task, completion), transcript)

    assert [(c.source, c.position, c.index) for c in claims] == expected


# ---- phase_windows -------------------------------------------------------------------------


def test_a_phase_complete_call_closes_its_window_at_the_call(
    three_phase_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair
) -> None:
    """The call belongs to its phase; its result already belongs to the next one."""
    transcript = make_transcript(
        tool_pair("Edit", file_path=APP),                 # 0, 1
        tool_pair(PHASE_COMPLETE_TOOL, phase=1),          # 2, 3
        tool_pair("Bash", command="pytest"),              # 4, 5
        tool_pair(PHASE_COMPLETE_TOOL, phase="2"),        # 6, 7
        tool_pair(SUBMIT_SUMMARY_TOOL, summary=GOOD),     # 8, 9
    )  # fmt: skip

    windows = phase_windows(in_mode(three_phase_task, "tool"), transcript)

    assert spans(windows) == [(0, 3, 2), (3, 7, 6), (7, 10, None)]
    assert [w.marker.source if w.marker else None for w in windows] == ["tool", "tool", None]


def test_the_last_tool_claim_after_the_previous_phase_is_the_one_that_counts(
    three_phase_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair
) -> None:
    """A premature phase_complete repeated after the work is replaced by the repetition; a
    phase 2 claim made before phase 1's counted claim does not count."""
    transcript = make_transcript(
        tool_pair(PHASE_COMPLETE_TOOL, phase=1, note="too early"),  # 0, 1
        tool_pair(PHASE_COMPLETE_TOOL, phase=2, note="too early"),  # 2, 3
        tool_pair("Edit", file_path=APP),                           # 4, 5
        tool_pair(PHASE_COMPLETE_TOOL, phase=1, note="edited"),     # 6, 7
        tool_pair("Bash", command="pytest"),                        # 8, 9
    )  # fmt: skip

    windows = phase_windows(in_mode(three_phase_task, "tool"), transcript)

    assert spans(windows) == [(0, 7, 6), (7, 10, None), (10, 10, None)]
    assert windows[0].marker is not None
    assert windows[0].marker.text == "edited"


def test_a_tool_claim_gives_the_output_window_no_head(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair
) -> None:
    """Only a marker line shares its text block with the answer; a tool call has no lines."""
    by_tool = make_transcript(tool_pair(PHASE_COMPLETE_TOOL, phase=1), AssistantText(text="{}"))
    by_marker = make_transcript(AssistantText(text=f"{MARKER_1}\n{{}}"))

    assert phase_windows(fix_task, by_tool)[1].head is None
    assert phase_windows(fix_task, by_marker)[1].head == (0, 0)


def test_in_either_mode_a_marker_and_a_tool_call_close_consecutive_phases(
    three_phase_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair
) -> None:
    """The two kinds of claim mix freely: phase 1 typed, phase 2 called."""
    transcript = make_transcript(
        AssistantText(text=MARKER_1), tool_pair(PHASE_COMPLETE_TOOL, phase=2)
    )

    windows = phase_windows(three_phase_task, transcript)

    assert spans(windows) == [(0, 1, 0), (1, 2, 1), (2, 3, None)]
    assert windows[2].head is None


# ---- judge in each mode --------------------------------------------------------------------


def test_in_tool_mode_a_typed_marker_and_printed_json_do_not_count(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair, make_timeline: TimelineOf
) -> None:
    """The marker-mode happy path is marker_missing and json_missing when only tools count."""
    transcript = make_transcript(
        UserText(text="prompt"),
        tool_pair("Edit", file_path=APP),
        AssistantText(text=MARKER_1),
        AssistantText(text=fenced(GOOD)),
    )
    timeline = make_timeline((0, BEFORE), (5, AFTER))

    judgment = judge(in_mode(fix_task, "tool"), transcript, timeline, workdir=WORKDIR)

    assert phase_codes(judgment) == [[IssueCode.MARKER_MISSING], [IssueCode.JSON_MISSING]]
    missing = judgment.phases[0].issues[0]
    assert missing.requirement == (
        "When the phase's work is done, call phase_complete(phase=1) with a one-line note"
    )
    assert judgment.output is None
    assert [p.completed_by for p in judgment.phases] == [None, None]


@pytest.fixture
def judge_tool_run(
    make_transcript: TranscriptOf, tool_pair: ToolPair, make_timeline: TimelineOf
) -> Callable[[Task], Judgment]:
    """``judge_tool_run(task)``: ``task`` judged on the tool-mode happy path (Edit, then
    phase_complete, then submit_summary, with the edit on disk)."""

    def run(task: Task) -> Judgment:
        transcript = make_transcript(
            UserText(text="prompt"),
            tool_pair("Edit", file_path=APP),
            tool_pair(PHASE_COMPLETE_TOOL, phase=1, note="edited"),
            tool_pair(SUBMIT_SUMMARY_TOOL, summary=GOOD),
        )
        timeline = make_timeline((0, BEFORE), (7, AFTER))
        return judge(task, transcript, timeline, workdir=WORKDIR)

    return run


def test_in_marker_mode_phase_complete_and_submit_summary_calls_do_not_count(
    fix_task: Task, judge_tool_run: Callable[[Task], Judgment]
) -> None:
    """The tool-mode happy path is marker_missing and json_missing when only markers count."""
    judgment = judge_tool_run(in_mode(fix_task, "marker"))

    assert phase_codes(judgment) == [[IssueCode.MARKER_MISSING], [IssueCode.JSON_MISSING]]
    assert judgment.phases[0].issues[0].requirement == (
        f"When the phase's work is done, print the line: {MARKER_1}"
    )
    assert not judgment.phases[0].marker_seen


def test_the_tool_mode_happy_path_is_accepted(
    fix_task: Task, judge_tool_run: Callable[[Task], Judgment]
) -> None:
    """Edit, phase_complete, submit_summary: accepted, with the answer as the output."""
    judgment = judge_tool_run(in_mode(fix_task, "tool"))

    assert phase_codes(judgment) == [[], []]
    assert judgment.output == GOOD
    assert [(p.start, p.end) for p in judgment.phases] == [(0, 4), (4, 7)]


@pytest.mark.parametrize(
    ("completion", "claim", "answer", "expected"),
    [
        ("either", "marker", "text", ["marker", "text"]),
        ("either", "tool", "submit_summary", ["tool", "submit_summary"]),
        ("marker", "marker", "structured_output", ["marker", "structured_output"]),
        ("tool", "tool", "structured_output", ["tool", "structured_output"]),
        ("either", "none", "none", [None, None]),
    ],
)
def test_completed_by_names_what_completed_each_phase(
    fix_task: Task,
    make_transcript: TranscriptOf,
    tool_pair: ToolPair,
    make_timeline: TimelineOf,
    completion: Completion,
    claim: str,
    answer: str,
    expected: list[str | None],
) -> None:
    """marker or tool for a work phase; text, submit_summary or structured_output for the
    output phase; None where nothing counted. StructuredOutput counts in every mode."""
    claims = {
        "marker": [AssistantText(text=MARKER_1)],
        "tool": list(tool_pair(PHASE_COMPLETE_TOOL, phase=1)),
        "none": [],
    }
    answers = {
        "text": [AssistantText(text=fenced(GOOD))],
        "submit_summary": list(tool_pair(SUBMIT_SUMMARY_TOOL, summary=GOOD)),
        "structured_output": list(tool_pair(STRUCTURED_OUTPUT_TOOL, **GOOD)),
        "none": [],
    }
    transcript = make_transcript(tool_pair("Edit", file_path=APP), claims[claim], answers[answer])
    timeline = make_timeline((0, BEFORE), (len(transcript), AFTER))

    judgment = judge(in_mode(fix_task, completion), transcript, timeline, workdir=WORKDIR)

    assert [p.completed_by for p in judgment.phases] == expected
    assert judgment.accepted is (claim != "none")
