"""Work-phase rules: marker, order, required tools, changes (phasegate.validators.work)."""

from __future__ import annotations

from collections.abc import Callable

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
from phasegate.phases.completion import Completion
from phasegate.phases.model import Phase, Task
from phasegate.validators.issues import IssueCode
from phasegate.validators.tools import CallRecord, tool_calls
from phasegate.validators.windows import PhaseWindow, phase_windows
from phasegate.validators.work import (
    check_changes,
    check_marker,
    check_order,
    check_required_tools,
    find_late_work,
)

MARKER_1 = "PHASE 1 COMPLETE: Files have been edited"
MARKER_2 = "PHASE 2 COMPLETE: Tests pass"
APP = "/srv/project/app.py"
BEFORE = {"app.py": "h1"}
AFTER = {"app.py": "h2"}

TranscriptOf = Callable[..., Transcript]
ToolPair = Callable[..., tuple[ToolCall, ToolResult]]
TimelineOf = Callable[..., WorkspaceTimeline]


Evidence = Callable[..., tuple[list[PhaseWindow], list[CallRecord]]]


@pytest.fixture
def evidence(make_transcript: TranscriptOf) -> Evidence:
    """``evidence(task, entry, (call, result), ...)``: the phase windows and tool calls of the
    transcript of those entries, which the rules are applied to."""

    def build(
        task: Task, *parts: Entry | tuple[ToolCall, ToolResult]
    ) -> tuple[list[PhaseWindow], list[CallRecord]]:
        transcript = make_transcript(*parts)
        return phase_windows(task, transcript), tool_calls(transcript)

    return build


def two_edit_phases() -> Task:
    """Two work phases that both require Edit, then an output phase."""
    return Task.model_validate(
        {
            "name": "two-edits",
            "phases": [
                {"name": "fix", "instructions": "Fix app.py.", "require_tools": ["Edit"]},
                {"name": "docs", "instructions": "Update the docs.", "require_tools": ["Edit"]},
                {"name": "report", "instructions": "Report.", "output_schema": {"type": "object"}},
            ],
        }
    )


# ---- marker_missing -------------------------------------------------------------------------


def test_a_phase_with_its_marker_has_no_marker_issue(fix_task: Task, evidence: Evidence) -> None:
    """The marker in assistant text satisfies the marker rule."""
    windows, _ = evidence(fix_task, AssistantText(text=MARKER_1))

    assert check_marker(windows[0]) == []


def test_a_phase_without_its_marker_is_missing_it_and_is_told_the_exact_line(
    fix_task: Task, evidence: Evidence
) -> None:
    """marker_missing is a 'missing' issue whose requirement quotes the marker line."""
    windows, _ = evidence(fix_task, AssistantText(text="All done, I think."))

    (issue,) = check_marker(windows[0])

    assert issue.code is IssueCode.MARKER_MISSING
    assert issue.group == "missing"
    assert (issue.phase, issue.field) == (1, "marker")
    assert issue.requirement is not None
    assert issue.requirement.endswith(MARKER_1)


@pytest.mark.parametrize(("completion", "missing"), [
    ("marker", f"no line '{MARKER_1}' in the assistant's text"),
    ("tool", "no phase_complete(phase=1) call"),
    ("either", f"neither a phase_complete(phase=1) call nor a line '{MARKER_1}' in the "
               "assistant's text"),
])  # fmt: skip
def test_the_missing_marker_message_names_each_way_it_could_have_been_claimed(
    fix_task: Task, evidence: Evidence, completion: Completion, missing: str
) -> None:
    """The message reads as a sentence in every completion mode (never "no a line ...")."""
    windows, _ = evidence(fix_task, AssistantText(text="All done, I think."))

    (issue,) = check_marker(windows[0], completion)

    assert issue.message == (
        f"Phase 1 (edit) was never marked complete: {missing} after the previous phase."
    )


# ---- marker_before_work ---------------------------------------------------------------------


def test_work_done_before_the_marker_is_in_order(
    fix_task: Task, evidence: Evidence, tool_pair: ToolPair
) -> None:
    """An edit and then the marker is the right order: no late work."""
    windows, calls = evidence(
        fix_task, tool_pair("Edit", file_path=APP), AssistantText(text=MARKER_1)
    )

    assert find_late_work(windows, calls) == {}
    assert check_order(windows[0], None, calls) == []


def test_an_edit_after_the_marker_is_late_work_for_that_phase(
    fix_task: Task, evidence: Evidence, tool_pair: ToolPair
) -> None:
    """The marker then the edit: marker_before_work, naming the tool and the line to re-print."""
    windows, calls = evidence(
        fix_task,
        UserText(text="prompt"),
        AssistantText(text=MARKER_1),
        tool_pair("Edit", file_path=APP),
    )

    late = find_late_work(windows, calls)
    (issue,) = check_order(windows[0], late.get(1), calls)

    assert late == {1: 2}
    assert issue.code is IssueCode.MARKER_BEFORE_WORK
    assert (issue.phase, issue.group) == (1, "invalid")
    assert issue.provided == "Edit after the completion"
    assert issue.requirement is not None
    assert "then mark phase 1 complete again" in issue.requirement


def test_an_edit_in_a_later_phase_that_requires_edits_is_not_late_work(
    evidence: Evidence, tool_pair: ToolPair
) -> None:
    """An edit after phase 1's marker belongs to phase 2 when phase 2 also requires Edit."""
    task = two_edit_phases()
    windows, calls = evidence(
        task,
        tool_pair("Edit", file_path=APP),
        AssistantText(text="PHASE 1 COMPLETE: done"),
        tool_pair("Edit", file_path="/srv/project/README.md"),
        AssistantText(text="PHASE 2 COMPLETE: done"),
    )

    assert find_late_work(windows, calls) == {}
    assert check_required_tools(windows[1], calls) == []


def test_an_edit_during_a_later_phase_that_does_not_require_edits_is_late_for_the_edit_phase(
    three_phase_task: Task, evidence: Evidence, tool_pair: ToolPair
) -> None:
    """The verify phase needs Bash, not Edit, so an edit there is the edit phase's late work."""
    windows, calls = evidence(
        three_phase_task,
        tool_pair("Edit", file_path=APP),
        AssistantText(text=MARKER_1),
        tool_pair("Bash", command="pytest"),
        tool_pair("Edit", file_path=APP),
        AssistantText(text=MARKER_2),
    )

    assert find_late_work(windows, calls) == {1: 5}


def test_a_failed_call_after_the_marker_is_not_late_work(
    fix_task: Task, evidence: Evidence, tool_pair: ToolPair
) -> None:
    """Only successful calls are work; a denied edit after the marker changes nothing."""
    windows, calls = evidence(
        fix_task,
        tool_pair("Edit", file_path=APP),
        AssistantText(text=MARKER_1),
        tool_pair("Edit", ok=False, result="Permission denied", file_path="/etc/hosts"),
    )

    assert find_late_work(windows, calls) == {}


def test_a_tool_the_phase_does_not_require_is_not_late_work(
    fix_task: Task, evidence: Evidence, tool_pair: ToolPair
) -> None:
    """Reading a file after the marker is not the edit phase's work."""
    windows, calls = evidence(
        fix_task,
        tool_pair("Edit", file_path=APP),
        AssistantText(text=MARKER_1),
        tool_pair("Read", file_path=APP),
    )

    assert find_late_work(windows, calls) == {}


def test_a_write_after_the_marker_is_late_work_for_a_phase_that_requires_changes(
    evidence: Evidence, tool_pair: ToolPair
) -> None:
    """require_changes makes any mutating tool the phase's work, even without require_tools."""
    task = Task(
        name="t",
        phases=(Phase(name="write", instructions="Write it.", require_changes=True),),
    )
    windows, calls = evidence(
        task, AssistantText(text="PHASE 1 COMPLETE: done"), tool_pair("Write", path="x")
    )

    assert find_late_work(windows, calls) == {1: 1}


# ---- tool_not_used / tool_failed ------------------------------------------------------------


def test_a_successful_call_of_a_required_tool_satisfies_the_tool_rule(
    fix_task: Task, evidence: Evidence, tool_pair: ToolPair
) -> None:
    """One successful Edit inside the phase is enough, even after a failed MultiEdit."""
    windows, calls = evidence(
        fix_task,
        tool_pair("MultiEdit", ok=False, result="No such tool available: MultiEdit"),
        tool_pair("Edit", file_path=APP),
        AssistantText(text=MARKER_1),
    )

    assert check_required_tools(windows[0], calls) == []


def test_no_call_of_a_required_tool_is_tool_not_used(
    fix_task: Task, evidence: Evidence, tool_pair: ToolPair
) -> None:
    """Reading and writing with other tools does not count: tool_not_used, a missing item."""
    windows, calls = evidence(
        fix_task,
        tool_pair("Read", file_path=APP),
        tool_pair("Write", file_path=APP),
        AssistantText(text=MARKER_1),
    )

    (issue,) = check_required_tools(windows[0], calls)

    assert issue.code is IssueCode.TOOL_NOT_USED
    assert (issue.group, issue.field) == ("missing", "tools")
    assert issue.requirement == "Use Edit or MultiEdit successfully during phase 1."


def test_calls_that_all_failed_are_tool_failed_not_tool_not_used(
    fix_task: Task, evidence: Evidence, tool_pair: ToolPair
) -> None:
    """Only error results: tool_failed, quoting the first line of each error."""
    windows, calls = evidence(
        fix_task,
        tool_pair("MultiEdit", ok=False, result="No such tool available: MultiEdit"),
        tool_pair("Edit", ok=False, result="String to replace not found in file.\nString: x"),
        AssistantText(text=MARKER_1),
    )

    (issue,) = check_required_tools(windows[0], calls)

    assert issue.code is IssueCode.TOOL_FAILED
    assert issue.group == "invalid"
    assert "2 call(s)" in issue.message
    assert issue.provided == (
        "MultiEdit: No such tool available: MultiEdit; Edit: String to replace not found in file."
    )


def test_a_call_without_a_result_is_not_a_success(fix_task: Task, evidence: Evidence) -> None:
    """A call the session never answered counts as failed, with 'no result'."""
    windows, calls = evidence(
        fix_task, ToolCall(id="toolu_x", name="Edit", input={"file_path": APP})
    )

    (issue,) = check_required_tools(windows[0], calls)

    assert issue.code is IssueCode.TOOL_FAILED
    assert issue.provided == "Edit: no result"


def test_a_required_tool_used_in_another_phase_does_not_count(
    three_phase_task: Task, evidence: Evidence, tool_pair: ToolPair
) -> None:
    """Bash run before phase 1's marker is phase 1's call, so phase 2 did not use Bash."""
    windows, calls = evidence(
        three_phase_task,
        tool_pair("Bash", command="pytest"),
        tool_pair("Edit", file_path=APP),
        AssistantText(text=MARKER_1),
        AssistantText(text=MARKER_2),
    )

    assert check_required_tools(windows[0], calls) == []
    assert [i.code for i in check_required_tools(windows[1], calls)] == [IssueCode.TOOL_NOT_USED]


def test_a_phase_that_requires_no_tool_has_no_tool_issue(evidence: Evidence) -> None:
    """Without require_tools the rule is silent."""
    task = Task(name="t", phases=(Phase(name="think", instructions="Think."),))
    windows, calls = evidence(task, AssistantText(text="PHASE 1 COMPLETE: done"))

    assert check_required_tools(windows[0], calls) == []


# ---- no_changes -----------------------------------------------------------------------------


def test_a_file_change_inside_the_phase_satisfies_require_changes(
    fix_task: Task,
    make_transcript: TranscriptOf,
    tool_pair: ToolPair,
    make_timeline: TimelineOf,
) -> None:
    """The snapshot at the marker differs from the one before: the rule holds."""
    transcript = make_transcript(
        UserText(text="prompt"), tool_pair("Edit", file_path=APP), AssistantText(text=MARKER_1)
    )
    windows = phase_windows(fix_task, transcript)
    timeline = make_timeline((0, BEFORE), (4, AFTER))

    assert check_changes(windows[0], timeline.diff(windows[0].start, windows[0].end)) == []


def test_no_file_change_during_the_phase_is_no_changes(
    fix_task: Task,
    make_transcript: TranscriptOf,
    tool_pair: ToolPair,
    make_timeline: TimelineOf,
) -> None:
    """A successful edit call that left the disk as it was is still no_changes."""
    transcript = make_transcript(
        UserText(text="prompt"), tool_pair("Edit", file_path=APP), AssistantText(text=MARKER_1)
    )
    windows = phase_windows(fix_task, transcript)
    timeline = make_timeline((0, BEFORE), (4, dict(BEFORE)))

    (issue,) = check_changes(windows[0], timeline.diff(windows[0].start, windows[0].end))

    assert issue.code is IssueCode.NO_CHANGES
    assert (issue.phase, issue.field, issue.group) == (1, "files", "missing")


def test_a_change_made_only_after_the_marker_does_not_count_for_the_phase(
    fix_task: Task,
    make_transcript: TranscriptOf,
    tool_pair: ToolPair,
    make_timeline: TimelineOf,
) -> None:
    """With a snapshot at the marker, a later change falls in the next window, not this one."""
    transcript = make_transcript(
        UserText(text="prompt"), AssistantText(text=MARKER_1), tool_pair("Write", file_path=APP)
    )
    windows = phase_windows(fix_task, transcript)
    timeline = make_timeline((0, BEFORE), (2, BEFORE), (4, AFTER))

    issues = check_changes(windows[0], timeline.diff(windows[0].start, windows[0].end))

    assert [i.code for i in issues] == [IssueCode.NO_CHANGES]
    assert timeline.diff(windows[1].start, windows[1].end).modified == ("app.py",)


@pytest.mark.parametrize("files", [BEFORE, AFTER])
def test_a_phase_that_does_not_require_changes_ignores_the_disk(
    evidence: Evidence, make_timeline: TimelineOf, files: dict[str, str]
) -> None:
    """Without require_changes the rule is silent, changed or not."""
    task = Task(name="t", phases=(Phase(name="look", instructions="Look."),))
    windows, _ = evidence(task, AssistantText(text="PHASE 1 COMPLETE: done"))
    timeline = make_timeline((0, BEFORE), (1, files))

    assert check_changes(windows[0], timeline.diff(0, 1)) == []
