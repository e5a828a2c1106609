"""Where the output phase's answer comes from (phasegate.validators.summary).

Printed JSON, a ``submit_summary`` call and a ``StructuredOutput`` call are all candidate
answers; the task's completion mode says which count, and the last one in the output phase's
window is the answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from phasegate.evidence.transcript import AssistantText, Entry, ToolCall, ToolResult, Transcript
from phasegate.phases.completion import (
    PHASE_COMPLETE_TOOL,
    STRUCTURED_OUTPUT_TOOL,
    SUBMIT_SUMMARY_TOOL,
    Completion,
)
from phasegate.phases.model import Task
from phasegate.validators.issues import IssueCode
from phasegate.validators.summary import SummaryCandidate, check_summary_present, summary_candidates
from phasegate.validators.windows import PhaseWindow, phase_windows

GOOD = {"files_changed": ["app.py"], "description": "Replaced eval with ast.literal_eval."}
OTHER = {"files_changed": ["util.py"], "description": "Guarded the parser against input."}
THIRD = {"files_changed": ["lib.py"], "description": "Swapped eval for a tiny parser."}
MARKER_1 = "PHASE 1 COMPLETE: Files have been edited"
NOT_AN_OBJECT = "submit_summary was called with a summary that is not an object"

TranscriptOf = Callable[..., Transcript]
ToolPair = Callable[..., tuple[ToolCall, ToolResult]]


def in_mode(task: Task, completion: Completion, *, structured: bool = False) -> Task:
    """``task`` in another completion mode, its output phase optionally asking for
    structured output."""
    output = task.phases[-1].model_copy(update={"structured_output": structured})
    return task.model_copy(update={"completion": completion, "phases": (*task.phases[:-1], output)})


def fenced(value: object) -> str:
    """``value`` in a ```json block."""
    return f"```json\n{json.dumps(value)}\n```"


def output_window(task: Task, transcript: Transcript) -> PhaseWindow:
    """The output phase's window of ``transcript``."""
    return phase_windows(task, transcript)[-1]


def every(transcript: Transcript, completion: Completion = "either") -> list[SummaryCandidate]:
    """Every candidate answer in the whole transcript."""
    return summary_candidates(transcript, 0, len(transcript), completion=completion)


# ---- answers: one candidate per source -------------------------------------------------------


def test_json_printed_in_assistant_text_is_a_text_answer(make_transcript: TranscriptOf) -> None:
    """A ```json block in the model's reply is parsed into its object."""
    (answer,) = every(make_transcript(AssistantText(text=f"Done.\n{fenced(GOOD)}")))

    assert (answer.position, answer.source, answer.value, answer.ok) == (0, "text", GOOD, True)
    assert answer.raw == json.dumps(GOOD)


def test_a_submit_summary_object_is_the_answer(
    make_transcript: TranscriptOf, tool_pair: ToolPair
) -> None:
    """The ``summary`` argument is the answer; ``raw`` is its JSON text."""
    (answer,) = every(make_transcript(tool_pair(SUBMIT_SUMMARY_TOOL, summary=GOOD)))

    assert answer == SummaryCandidate(
        position=0, source="submit_summary", raw=json.dumps(GOOD), value=GOOD
    )
    assert answer.ok


def test_a_summary_passed_as_a_json_string_counts_as_the_object_it_holds(
    make_transcript: TranscriptOf, tool_pair: ToolPair
) -> None:
    """Models sometimes serialize the object themselves; what the string holds is the answer."""
    summary = json.dumps(GOOD)

    (answer,) = every(make_transcript(tool_pair(SUBMIT_SUMMARY_TOOL, summary=summary)))

    assert (answer.source, answer.value, answer.ok) == ("submit_summary", GOOD, True)
    assert answer.raw == json.dumps(summary)


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ({}, "submit_summary was called with no summary argument"),
        ({"summary": ["app.py"]}, NOT_AN_OBJECT),
        ({"summary": "fixed app.py"}, NOT_AN_OBJECT),
        ({"summary": "[1, 2]"}, NOT_AN_OBJECT),
    ],
    ids=["missing", "list", "prose-string", "json-string-of-a-list"],
)  # fmt: skip
def test_a_submit_summary_without_an_object_is_an_unusable_answer(
    make_transcript: TranscriptOf, tool_pair: ToolPair, arguments: dict[str, object], error: str
) -> None:
    """The call still counts as an attempt to answer, with the reason it is unusable."""
    (answer,) = every(make_transcript(tool_pair(SUBMIT_SUMMARY_TOOL, **arguments)))

    assert (answer.source, answer.value, answer.error, answer.ok) == (
        "submit_summary", None, error, False
    )  # fmt: skip


def test_a_structured_output_call_is_the_answer_its_input_holds(
    make_transcript: TranscriptOf, tool_pair: ToolPair
) -> None:
    """Claude Code's StructuredOutput tool gets the object itself as its input."""
    (answer,) = every(make_transcript(tool_pair(STRUCTURED_OUTPUT_TOOL, result="ok", **GOOD)))

    assert answer == SummaryCandidate(
        position=0, source="structured_output", raw=json.dumps(GOOD), value=GOOD
    )


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("Error: Output does not match required schema: 'description' is too short",
         "Output does not match required schema: 'description' is too short"),
        ("  ", "rejected"),
    ],
    ids=["with-reason", "blank"],
)  # fmt: skip
def test_a_structured_output_the_runtime_refused_carries_the_refusal(
    make_transcript: TranscriptOf, tool_pair: ToolPair, content: str, reason: str
) -> None:
    """An error result for StructuredOutput is the runtime saying no; the reason is kept
    without its ``Error:`` prefix, and the value is still the object that was given."""
    transcript = make_transcript(
        tool_pair(STRUCTURED_OUTPUT_TOOL, ok=False, result=content, **GOOD)
    )

    (answer,) = every(transcript)

    assert (answer.value, answer.rejected_by_runtime) == (GOOD, reason)


def test_a_structured_output_without_a_result_was_not_refused(
    make_transcript: TranscriptOf,
) -> None:
    """The call is judged while the runtime has not answered yet: no refusal to report."""
    transcript = make_transcript(ToolCall(id="toolu_9", name=STRUCTURED_OUTPUT_TOOL, input=GOOD))

    (answer,) = every(transcript)

    assert answer.rejected_by_runtime is None


def test_a_failed_submit_summary_result_is_no_runtime_refusal(
    make_transcript: TranscriptOf, tool_pair: ToolPair
) -> None:
    """phasegate's own validation_failed answer is an error result, not the runtime's refusal."""
    refused = '{"result": "validation_failed"}'
    transcript = make_transcript(
        tool_pair(SUBMIT_SUMMARY_TOOL, ok=False, result=refused, summary=GOOD)
    )

    (answer,) = every(transcript)

    assert (answer.ok, answer.rejected_by_runtime) == (True, None)


@pytest.mark.parametrize(
    ("completion", "sources"),
    [
        ("marker", ["text", "structured_output"]),
        ("tool", ["submit_summary", "structured_output"]),
        ("either", ["text", "submit_summary", "structured_output"]),
    ],
)
def test_the_completion_mode_decides_which_sources_count(
    make_transcript: TranscriptOf,
    tool_pair: ToolPair,
    completion: Completion,
    sources: list[str],
) -> None:
    """Printed JSON needs markers, submit_summary needs tools; StructuredOutput always counts."""
    transcript = make_transcript(
        AssistantText(text=fenced(GOOD)),
        tool_pair(SUBMIT_SUMMARY_TOOL, summary=GOOD),
        tool_pair(STRUCTURED_OUTPUT_TOOL, **GOOD),
    )

    assert [a.source for a in every(transcript, completion)] == sources


def test_answers_only_looks_inside_the_given_entries(
    make_transcript: TranscriptOf, tool_pair: ToolPair
) -> None:
    """``[start, end)`` is honoured, and an end past the transcript is harmless."""
    transcript = make_transcript(
        AssistantText(text=fenced(GOOD)),               # 0
        tool_pair(SUBMIT_SUMMARY_TOOL, summary=OTHER),  # 1, 2
        AssistantText(text=fenced(THIRD)),              # 3
    )  # fmt: skip

    found = summary_candidates(transcript, 1, 99, completion="either")

    assert [(a.position, a.value) for a in found] == [(1, OTHER), (3, THIRD)]


# ---- check_summary_present ------------------------------------------------------------------


def given_as(source: str, value: dict[str, Any], tool_pair: ToolPair) -> list[Entry]:
    """``value`` given as an answer through ``source``."""
    if source == "text":
        return [AssistantText(text=fenced(value))]
    if source == "submit_summary":
        return list(tool_pair(SUBMIT_SUMMARY_TOOL, summary=value))
    return list(tool_pair(STRUCTURED_OUTPUT_TOOL, **value))


@pytest.mark.parametrize(
    "order",
    [
        ["text", "submit_summary", "structured_output"],
        ["structured_output", "submit_summary", "text"],
        ["submit_summary", "text", "structured_output"],
        ["structured_output", "text", "submit_summary"],
    ],
    ids=["structured-last", "text-last", "structured-last-after-text", "submit-summary-last"],
)
def test_the_last_answer_in_the_window_wins_whatever_its_source(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair, order: list[str]
) -> None:
    """A later answer replaces an earlier one: order decides, not the kind of source."""
    transcript = make_transcript(
        AssistantText(text=MARKER_1),
        *(
            given_as(source, value, tool_pair)
            for source, value in zip(order, [GOOD, OTHER, THIRD], strict=True)
        ),
    )

    answer, issues = check_summary_present(
        output_window(fix_task, transcript), transcript, markers=True, completion="either"
    )

    assert issues == []
    assert answer is not None
    assert (answer.source, answer.value) == (order[-1], THIRD)


def test_an_unusable_last_answer_is_json_invalid_even_after_a_good_one(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair
) -> None:
    """The last candidate is the answer; a good one before it does not rescue it."""
    transcript = make_transcript(
        AssistantText(text=MARKER_1),
        tool_pair(SUBMIT_SUMMARY_TOOL, summary=GOOD),
        tool_pair(SUBMIT_SUMMARY_TOOL),
    )

    answer, issues = check_summary_present(
        output_window(fix_task, transcript), transcript, markers=True, completion="tool"
    )

    assert answer is None
    (issue,) = issues
    assert (issue.code, issue.phase, issue.field, issue.provided) == (
        IssueCode.JSON_INVALID, 2, "json", "null"
    )  # fmt: skip
    assert "submit_summary was called with no summary argument" in issue.message
    assert issue.requirement == (
        "Give a corrected JSON object through submit_summary(summary=...)."
    )


def test_a_submit_summary_before_the_work_phase_is_claimed_is_json_before_marker(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair
) -> None:
    """Answering first and claiming phase 1 afterwards leaves the output window empty."""
    task = in_mode(fix_task, "tool")
    transcript = make_transcript(
        tool_pair(SUBMIT_SUMMARY_TOOL, summary=GOOD),          # 0, 1
        tool_pair("Edit", file_path="/srv/project/app.py"),    # 2, 3
        tool_pair(PHASE_COMPLETE_TOOL, phase=1),               # 4, 5
    )  # fmt: skip
    window = output_window(task, transcript)
    assert (window.start, window.end) == (5, 6)

    answer, issues = check_summary_present(window, transcript, markers=True, completion="tool")

    assert answer is None
    assert [(i.code, i.phase, i.field) for i in issues] == [
        (IssueCode.JSON_BEFORE_MARKER, 2, "json")
    ]


def test_without_markers_an_early_answer_is_simply_missing(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair
) -> None:
    """The unstructured baseline has no order to break; an empty window is json_missing."""
    transcript = make_transcript(tool_pair(SUBMIT_SUMMARY_TOOL, summary=GOOD))
    window = PhaseWindow(phase=fix_task.phases[1], index=2, start=2, end=2)

    _, issues = check_summary_present(window, transcript, markers=False, completion="either")

    assert [i.code for i in issues] == [IssueCode.JSON_MISSING]


def test_json_missing_for_a_structured_output_phase_names_the_structured_output_tool(
    fix_task: Task, make_transcript: TranscriptOf
) -> None:
    """The runtime reports such a session as a success without output; say what was missing."""
    task = in_mode(fix_task, "either", structured=True)
    transcript = make_transcript(AssistantText(text=MARKER_1))

    answer, issues = check_summary_present(
        output_window(task, transcript), transcript, markers=True, completion="either"
    )

    assert answer is None
    (issue,) = issues
    assert issue.code is IssueCode.JSON_MISSING
    assert issue.group == "missing"
    assert issue.message == (
        "Phase 2 (summary) asked for structured output and none was given: "
        "no StructuredOutput call was made."
    )
    assert issue.requirement == (
        "Give the JSON object the output phase describes through the StructuredOutput tool "
        "or submit_summary(summary=...) or a ```json block in your reply."
    )


@pytest.mark.parametrize(
    ("completion", "ways"),
    [
        ("marker", "a ```json block in your reply"),
        ("tool", "submit_summary(summary=...)"),
        ("either", "submit_summary(summary=...) or a ```json block in your reply"),
    ],
)
def test_json_missing_lists_only_the_ways_the_mode_allows(
    fix_task: Task, make_transcript: TranscriptOf, completion: Completion, ways: str
) -> None:
    """The requirement never offers a way of answering that would not count."""
    transcript = make_transcript(AssistantText(text="All done."))
    window = PhaseWindow(phase=fix_task.phases[1], index=2, start=0, end=1)

    _, issues = check_summary_present(window, transcript, markers=True, completion=completion)

    (issue,) = issues
    assert issue.message == "Phase 2 (summary) needs a JSON object and none was given."
    assert issue.requirement == f"Give the JSON object the output phase describes through {ways}."


def test_json_after_a_marker_in_the_same_text_block_is_the_answer(
    fix_task: Task, make_transcript: TranscriptOf
) -> None:
    """The marker line and the JSON printed together: the lines after the marker count."""
    transcript = make_transcript(AssistantText(text=f"{fenced(OTHER)}\n{MARKER_1}\n{fenced(GOOD)}"))

    answer, issues = check_summary_present(
        output_window(fix_task, transcript), transcript, markers=True, completion="either"
    )

    assert issues == []
    assert answer is not None
    assert (answer.position, answer.source, answer.value) == (0, "text", GOOD)
