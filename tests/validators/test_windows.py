"""Cutting a transcript into phase windows (phasegate.validators.windows).

This is where the marker grammar meets the transcript: only assistant text is searched, and
only numbers of the task's work phases count.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from phasegate.evidence.transcript import (
    AssistantText,
    Entry,
    Notice,
    ToolCall,
    ToolResult,
    Transcript,
    UserText,
)
from phasegate.phases.model import Phase, Task
from phasegate.prompts.phased import phased_prompt
from phasegate.validators.windows import CompletionClaim, PhaseWindow, phase_windows

MARKER_1 = "PHASE 1 COMPLETE: Files have been edited"
MARKER_2 = "PHASE 2 COMPLETE: Tests pass"

TranscriptOf = Callable[..., Transcript]
ToolPair = Callable[..., tuple[ToolCall, ToolResult]]


def spans(windows: list[PhaseWindow]) -> list[tuple[int, int, int | None]]:
    """(start, end, marker_at) of each window, for compact assertions."""
    return [(w.start, w.end, w.marker_at) for w in windows]


def test_an_assistant_marker_closes_its_phase_at_the_marker(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair
) -> None:
    """The edit phase owns everything up to and including its marker; the output phase the rest."""
    transcript = make_transcript(
        UserText(text="prompt"),
        tool_pair("Edit", file_path="/srv/project/app.py"),
        AssistantText(text=MARKER_1),
        AssistantText(text='{"files_changed": []}'),
    )

    windows = phase_windows(fix_task, transcript)

    assert spans(windows) == [(0, 4, 3), (4, 5, None)]
    assert windows[0].marker == CompletionClaim(
        position=3, index=1, line=0, source="marker", text="Files have been edited"
    )
    assert windows[1].head == (3, 0)
    assert 3 in windows[0]
    assert 4 not in windows[0]


@pytest.mark.parametrize(
    "entry",
    [
        ToolResult(tool_use_id="toolu_1", ok=True, content=f"notes.md:\n{MARKER_1}\n"),
        UserText(text=f"When you are done print:\n{MARKER_1}"),
        ToolCall(id="toolu_2", name="Bash", input={"command": f"echo '{MARKER_1}'"}),
        ToolCall(id="toolu_3", name="Write", input={"file_path": "a.md", "content": MARKER_1}),
        Notice(text=f"API Error: 500\n{MARKER_1}"),
    ],
    ids=["tool-result", "user-message", "tool-input-command", "tool-input-content", "notice"],
)
def test_a_marker_outside_assistant_text_does_not_complete_a_phase(
    fix_task: Task, make_transcript: TranscriptOf, entry: Entry
) -> None:
    """Markers in tool results, user messages, tool inputs or runtime notices never count."""
    windows = phase_windows(fix_task, make_transcript(entry))

    assert windows[0].marker_at is None
    assert windows[0].end == 1


def test_the_phased_prompt_itself_does_not_complete_a_phase(
    fix_task: Task, make_transcript: TranscriptOf, bundled_prompts: None
) -> None:
    """The prompt contains the exact marker line, but it is user text, so it is not a claim."""
    prompt = phased_prompt(fix_task)
    assert MARKER_1 in prompt.splitlines()

    windows = phase_windows(fix_task, make_transcript(UserText(text=prompt)))

    assert windows[0].marker_at is None


@pytest.mark.parametrize(
    "marker",
    ["PHASE 0 COMPLETE: done", "PHASE 3 COMPLETE: done", "PHASE 2 COMPLETE: done"],
    ids=["zero", "too-large", "output-phase-number"],
)
def test_a_marker_with_a_number_that_is_not_a_work_phase_completes_nothing(
    fix_task: Task, make_transcript: TranscriptOf, marker: str
) -> None:
    """0, a number past the last phase, or the output phase's number is not a work marker."""
    transcript = make_transcript(AssistantText(text=marker), AssistantText(text="ok"))

    windows = phase_windows(fix_task, transcript)

    assert spans(windows) == [(0, 2, None), (2, 2, None)]


@pytest.mark.parametrize(
    "text",
    [
        f"I will print {MARKER_1} next.",
        f"```\n{MARKER_1}\n```",
        MARKER_1.lower(),
    ],
    ids=["mid-sentence", "fenced", "lowercase"],
)
def test_a_marker_the_grammar_rejects_does_not_complete_a_phase(
    fix_task: Task, make_transcript: TranscriptOf, text: str
) -> None:
    """Grammar rejections hold in context: the phase stays open to the end."""
    windows = phase_windows(fix_task, make_transcript(AssistantText(text=text)))

    assert windows[0].marker_at is None


@pytest.mark.parametrize(
    "text", [f"**{MARKER_1}**", f"## {MARKER_1}", f"Done!\n\n### **{MARKER_1}**\n"]
)
def test_a_decorated_marker_completes_its_phase(
    fix_task: Task, make_transcript: TranscriptOf, text: str
) -> None:
    """Bold or heading decoration on the marker line is tolerated in context."""
    windows = phase_windows(fix_task, make_transcript(AssistantText(text=text)))

    assert windows[0].marker_at == 0


def test_a_repeated_marker_counts_at_its_last_occurrence(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair
) -> None:
    """A marker re-printed after more work replaces the premature one as the phase's end."""
    transcript = make_transcript(
        AssistantText(text=MARKER_1),
        tool_pair("Edit", file_path="app.py"),
        AssistantText(text=MARKER_1),
        AssistantText(text="{}"),
    )

    windows = phase_windows(fix_task, transcript)

    assert spans(windows) == [(0, 4, 3), (4, 5, None)]


def test_two_markers_in_one_text_block_close_both_phases(
    three_phase_task: Task, make_transcript: TranscriptOf
) -> None:
    """Both markers count; the second phase's window is empty (it did nothing after phase 1)."""
    transcript = make_transcript(
        UserText(text="prompt"), AssistantText(text=f"{MARKER_1}\n{MARKER_2}\n")
    )

    windows = phase_windows(three_phase_task, transcript)

    assert spans(windows) == [(0, 2, 1), (2, 2, 1), (2, 2, None)]
    assert windows[1].marker is not None
    assert (windows[1].marker.index, windows[1].marker.line) == (2, 1)
    assert windows[1].marker.text == "Tests pass"
    assert windows[2].head == (1, 1)


def test_a_later_marker_printed_before_the_earlier_one_does_not_count(
    three_phase_task: Task, make_transcript: TranscriptOf
) -> None:
    """Phase 2's marker only counts after phase 1 ended; printed before, it is ignored."""
    transcript = make_transcript(AssistantText(text=MARKER_2), AssistantText(text=MARKER_1))

    windows = phase_windows(three_phase_task, transcript)

    assert spans(windows) == [(0, 2, 1), (2, 2, None), (2, 2, None)]


def test_an_unmarked_phase_ends_where_a_later_phase_marker_appears(
    three_phase_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair
) -> None:
    """Phase 1 without a marker extends to phase 2's marker, so phase 2 still gets a window."""
    transcript = make_transcript(
        tool_pair("Edit", file_path="app.py"),
        tool_pair("Bash", command="pytest"),
        AssistantText(text=MARKER_2),
    )

    windows = phase_windows(three_phase_task, transcript)

    assert spans(windows) == [(0, 4, None), (4, 5, 4), (5, 5, None)]


def test_windows_cover_the_transcript_contiguously_in_phase_order(
    three_phase_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair
) -> None:
    """Each window starts where the previous one ended, and the last ends with the transcript."""
    transcript = make_transcript(
        UserText(text="prompt"),
        tool_pair("Edit", file_path="app.py"),
        AssistantText(text=MARKER_1),
        tool_pair("Bash", command="pytest"),
        AssistantText(text=MARKER_2),
        AssistantText(text="{}"),
    )

    windows = phase_windows(three_phase_task, transcript)

    assert [w.index for w in windows] == [1, 2, 3]
    assert [w.phase.name for w in windows] == ["edit", "verify", "summary"]
    assert spans(windows) == [(0, 4, 3), (4, 7, 6), (7, 8, None)]


def test_without_markers_every_phase_sees_the_whole_transcript(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair
) -> None:
    """The unstructured baseline judges every phase on everything, markers ignored."""
    transcript = make_transcript(
        tool_pair("Edit", file_path="app.py"), AssistantText(text=MARKER_1)
    )

    windows = phase_windows(fix_task, transcript, markers=False)

    assert spans(windows) == [(0, 3, None), (0, 3, None)]


def test_a_task_of_work_phases_only_has_no_output_window(make_transcript: TranscriptOf) -> None:
    """Without an output phase there is one window per work phase and nothing else."""
    task = Task(name="t", phases=(Phase(name="a", instructions="x"),))

    windows = phase_windows(task, make_transcript(AssistantText(text="PHASE 1 COMPLETE: done")))

    assert spans(windows) == [(0, 1, 0)]
