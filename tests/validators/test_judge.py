"""Judging a whole transcript against a task (phasegate.validators.judge).

Snapshots follow the runner: one before the run (position 0), one after each marker entry
(position = entries seen so far), one at each stop.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from phasegate.evidence.saved_transcript import parse_stream_json
from phasegate.evidence.transcript import AssistantText, ToolCall, ToolResult, Transcript, UserText
from phasegate.evidence.workspace import WorkspaceTimeline
from phasegate.phases.model import Phase, Task
from phasegate.validators.issues import IssueCode
from phasegate.validators.judge import Judgment, judge

WORKDIR = "/srv/project"
APP = f"{WORKDIR}/app.py"
MARKER_1 = "PHASE 1 COMPLETE: Files have been edited"
MARKER_2 = "PHASE 2 COMPLETE: Tests pass"
GOOD = {"files_changed": ["app.py"], "description": "Replaced eval with ast.literal_eval."}
BEFORE = {"app.py": "h1", "util.py": "u1"}
AFTER = {"app.py": "h2", "util.py": "u1"}
TRANSCRIPTS = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"

TranscriptOf = Callable[..., Transcript]
ToolPair = Callable[..., tuple[ToolCall, ToolResult]]
TimelineOf = Callable[..., WorkspaceTimeline]


def fenced(value: object) -> str:
    """``value`` in a ```json block."""
    return f"```json\n{json.dumps(value, indent=2)}\n```"


def phase_codes(judgment: Judgment) -> list[list[IssueCode]]:
    """The issue codes of each phase, in phase order."""
    return [[issue.code for issue in phase.issues] for phase in judgment.phases]


def test_edits_then_marker_then_json_are_accepted_with_their_evidence(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair, make_timeline: TimelineOf
) -> None:
    """The intended run: every phase accepted, and the evidence recorded per phase."""
    transcript = make_transcript(
        UserText(text="prompt"),
        tool_pair("Edit", file_path=APP, old_string="eval(x)", new_string="literal_eval(x)"),
        AssistantText(text=MARKER_1),
        AssistantText(text=fenced(GOOD)),
    )
    timeline = make_timeline((0, BEFORE), (4, AFTER), (5, AFTER))

    judgment = judge(fix_task, transcript, timeline, workdir=WORKDIR)

    assert judgment.accepted
    assert judgment.issues == ()
    assert judgment.output == GOOD
    assert (judgment.files_changed, judgment.files_claimed) == (("app.py",), ("app.py",))
    edit, summary = judgment.phases
    assert (edit.index, edit.name, edit.marker_seen, edit.reached) == (1, "edit", True, True)
    assert (edit.tools, edit.tool_errors, edit.files_changed) == ({"Edit": 1}, 0, ("app.py",))
    assert (summary.index, summary.marker_seen, summary.reached) == (2, False, True)
    assert summary.files_changed == ()


def test_json_without_any_edit_is_rejected_on_every_count(
    fix_task: Task, make_transcript: TranscriptOf, make_timeline: TimelineOf
) -> None:
    """The seed-002 failure: a summary with no marker, no edit and no change on disk."""
    transcript = make_transcript(UserText(text="prompt"), AssistantText(text=fenced(GOOD)))
    timeline = make_timeline((0, BEFORE), (2, BEFORE))

    judgment = judge(fix_task, transcript, timeline, workdir=WORKDIR)

    assert not judgment.accepted
    assert phase_codes(judgment) == [
        [IssueCode.MARKER_MISSING, IssueCode.TOOL_NOT_USED, IssueCode.NO_CHANGES],
        [IssueCode.JSON_BEFORE_MARKER],
    ]
    assert [p.reached for p in judgment.phases] == [False, True]
    assert judgment.output is None


def test_a_marker_claimed_without_edits_is_caught_by_the_tool_disk_and_claim_rules(
    fix_task: Task, make_transcript: TranscriptOf, make_timeline: TimelineOf
) -> None:
    """The marker is a claim, not evidence: no Edit, no change, and the JSON's claim is false."""
    transcript = make_transcript(
        UserText(text="prompt"), AssistantText(text=f"{MARKER_1}\n\n{fenced(GOOD)}")
    )
    timeline = make_timeline((0, BEFORE), (2, BEFORE))

    judgment = judge(fix_task, transcript, timeline, workdir=WORKDIR)

    assert phase_codes(judgment) == [
        [IssueCode.TOOL_NOT_USED, IssueCode.NO_CHANGES],
        [IssueCode.CLAIMED_NOT_CHANGED],
    ]
    assert judgment.output == GOOD
    assert judgment.files_claimed == ("app.py",)


def test_a_marker_inside_a_tool_result_does_not_complete_a_phase(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair, make_timeline: TimelineOf
) -> None:
    """A file the agent read that contains the marker line does not mark the phase complete."""
    transcript = make_transcript(
        UserText(text="prompt"),
        tool_pair("Read", result=f"# notes\n{MARKER_1}\n", file_path=f"{WORKDIR}/NOTES.md"),
        tool_pair("Edit", file_path=APP),
        AssistantText(text=fenced(GOOD)),
    )
    timeline = make_timeline((0, BEFORE), (6, AFTER))

    judgment = judge(fix_task, transcript, timeline, workdir=WORKDIR)

    assert phase_codes(judgment) == [[IssueCode.MARKER_MISSING], [IssueCode.JSON_BEFORE_MARKER]]
    assert not judgment.phases[0].marker_seen


def test_a_marker_inside_a_user_message_does_not_complete_a_phase(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair, make_timeline: TimelineOf
) -> None:
    """The prompt or feedback quoting the marker is not the agent saying it."""
    transcript = make_transcript(
        UserText(text=f"When done, print:\n{MARKER_1}"), tool_pair("Edit", file_path=APP)
    )
    timeline = make_timeline((0, BEFORE), (3, AFTER))

    judgment = judge(fix_task, transcript, timeline, workdir=WORKDIR)

    assert phase_codes(judgment)[0] == [IssueCode.MARKER_MISSING]


def test_a_marker_before_the_edit_is_marker_before_work(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair, make_timeline: TimelineOf
) -> None:
    """Claiming the phase done and then doing the work is reported as out of order."""
    transcript = make_transcript(
        UserText(text="prompt"),
        AssistantText(text=MARKER_1),
        tool_pair("Edit", file_path=APP),
        AssistantText(text=fenced(GOOD)),
    )
    timeline = make_timeline((0, BEFORE), (2, BEFORE), (5, AFTER))

    judgment = judge(fix_task, transcript, timeline, workdir=WORKDIR)

    assert phase_codes(judgment) == [[IssueCode.MARKER_BEFORE_WORK], []]


def test_a_phase_fixed_after_feedback_is_judged_on_the_latest_evidence(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair, make_timeline: TimelineOf
) -> None:
    """A premature marker and JSON, then feedback, the edit, the marker and the JSON again."""
    transcript = make_transcript(
        UserText(text="prompt"),
        AssistantText(text=f"{MARKER_1}\n{fenced(GOOD)}"),
        UserText(text='{"result": "validation_failed"}'),
        tool_pair("Edit", file_path=APP),
        AssistantText(text=MARKER_1),
        AssistantText(text=fenced(GOOD)),
    )
    timeline = make_timeline((0, BEFORE), (2, BEFORE), (6, AFTER), (7, AFTER))

    judgment = judge(fix_task, transcript, timeline, workdir=WORKDIR)

    assert phase_codes(judgment) == [[], []]
    assert judgment.phases[0].files_changed == ("app.py",)


def test_an_edit_for_a_later_phase_requiring_edits_is_not_late_work_for_the_earlier_one(
    make_transcript: TranscriptOf, tool_pair: ToolPair, make_timeline: TimelineOf
) -> None:
    """Two edit phases in a row: the second phase's edit belongs to the second phase."""
    task = Task.model_validate(
        {
            "name": "two-edits",
            "phases": [
                {"name": "fix", "instructions": "Fix.", "require_tools": ["Edit"]},
                {"name": "docs", "instructions": "Document.", "require_tools": ["Edit"]},
            ],
        }
    )
    transcript = make_transcript(
        tool_pair("Edit", file_path=APP),
        AssistantText(text="PHASE 1 COMPLETE: done"),
        tool_pair("Edit", file_path=f"{WORKDIR}/README.md"),
        AssistantText(text="PHASE 2 COMPLETE: done"),
    )

    judgment = judge(task, transcript, make_timeline((0, BEFORE)), workdir=WORKDIR)

    assert judgment.accepted
    assert [p.tools for p in judgment.phases] == [{"Edit": 1}, {"Edit": 1}]


def test_only_failed_edits_are_tool_failed_and_counted_as_tool_errors(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair, make_timeline: TimelineOf
) -> None:
    """Calls that all came back as errors: tool_failed, and the errors are counted."""
    transcript = make_transcript(
        tool_pair("MultiEdit", ok=False, result="No such tool available: MultiEdit"),
        AssistantText(text=MARKER_1),
    )
    timeline = make_timeline((0, BEFORE), (3, BEFORE))

    judgment = judge(fix_task, transcript, timeline, workdir=WORKDIR)

    assert phase_codes(judgment)[0] == [IssueCode.TOOL_FAILED, IssueCode.NO_CHANGES]
    assert (judgment.phases[0].tools, judgment.phases[0].tool_errors) == ({}, 1)


def test_work_of_phase_2_done_before_phase_1_ends_does_not_count_for_phase_2(
    three_phase_task: Task,
    make_transcript: TranscriptOf,
    tool_pair: ToolPair,
    make_timeline: TimelineOf,
) -> None:
    """Both markers printed together after all the work: phase 2 did its work in phase 1."""
    transcript = make_transcript(
        tool_pair("Edit", file_path=APP),
        tool_pair("Bash", command="pytest"),
        AssistantText(text=f"{MARKER_1}\n{MARKER_2}\n{fenced(GOOD)}"),
    )
    timeline = make_timeline((0, BEFORE), (5, AFTER))

    judgment = judge(three_phase_task, transcript, timeline, workdir=WORKDIR)

    assert phase_codes(judgment) == [[], [IssueCode.TOOL_NOT_USED], []]
    assert [p.marker_seen for p in judgment.phases] == [True, True, False]


def test_a_path_outside_the_work_directory_is_an_issue_of_its_phase(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair, make_timeline: TimelineOf
) -> None:
    """A denied edit of /etc/hosts is reported even when the phase's real work succeeded."""
    transcript = make_transcript(
        tool_pair("Edit", ok=False, result="Permission denied", file_path="/etc/hosts"),
        tool_pair("Edit", file_path=APP),
        AssistantText(text=MARKER_1),
        AssistantText(text=fenced(GOOD)),
    )
    timeline = make_timeline((0, BEFORE), (5, AFTER), (6, AFTER))

    judgment = judge(fix_task, transcript, timeline, workdir=WORKDIR)

    assert phase_codes(judgment) == [[IssueCode.PATH_OUTSIDE_WORKDIR], []]


def test_the_output_rules_all_apply_to_the_accepted_json(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair, make_timeline: TimelineOf
) -> None:
    """Schema, placeholders and claims are all checked on the parsed JSON."""
    value = {"files_changed": ["util.py"], "description": "TBD", "extra": 1}
    transcript = make_transcript(
        tool_pair("Edit", file_path=APP),
        AssistantText(text=MARKER_1),
        AssistantText(text=fenced(value)),
    )
    timeline = make_timeline((0, BEFORE), (3, AFTER), (4, AFTER))

    judgment = judge(fix_task, transcript, timeline, workdir=WORKDIR)

    assert sorted(phase_codes(judgment)[1]) == sorted(
        [
            IssueCode.SCHEMA_VIOLATION,  # description shorter than minLength 10
            IssueCode.SCHEMA_VIOLATION,  # extra is not a field of the schema
            IssueCode.PLACEHOLDER_VALUE,
            IssueCode.CLAIMED_NOT_CHANGED,
            IssueCode.CHANGED_NOT_CLAIMED,
        ]
    )
    assert judgment.output == value
    assert judgment.files_claimed == ("util.py",)


def test_the_unstructured_baseline_skips_the_marker_rules(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair, make_timeline: TimelineOf
) -> None:
    """markers=False: no marker needed, JSON anywhere, evidence rules still apply."""
    transcript = make_transcript(
        UserText(text="prompt"), tool_pair("Edit", file_path=APP), AssistantText(text=fenced(GOOD))
    )

    changed = judge(
        fix_task, transcript, make_timeline((0, BEFORE), (4, AFTER)), workdir=WORKDIR, markers=False
    )
    unchanged = judge(
        fix_task,
        transcript,
        make_timeline((0, BEFORE), (4, BEFORE)),
        workdir=WORKDIR,
        markers=False,
    )

    assert changed.accepted
    assert phase_codes(unchanged) == [[IssueCode.NO_CHANGES], [IssueCode.CLAIMED_NOT_CHANGED]]


def test_judging_is_stateless_and_repeatable(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair, make_timeline: TimelineOf
) -> None:
    """The same evidence always gives the same judgment."""
    transcript = make_transcript(tool_pair("Edit", file_path=APP), AssistantText(text=MARKER_1))
    timeline = make_timeline((0, BEFORE), (3, AFTER))

    assert judge(fix_task, transcript, timeline, workdir=WORKDIR) == judge(
        fix_task, transcript, timeline, workdir=WORKDIR
    )


def test_judgment_issues_are_in_phase_order(
    fix_task: Task, make_transcript: TranscriptOf, make_timeline: TimelineOf
) -> None:
    """Judgment.issues lists phase 1's issues before phase 2's."""
    judgment = judge(
        fix_task,
        make_transcript(UserText(text="prompt")),
        make_timeline((0, BEFORE)),
        workdir=WORKDIR,
    )

    assert [i.phase for i in judgment.issues] == [1, 1, 1, 2]


def test_a_task_without_an_output_phase_has_no_output(
    make_transcript: TranscriptOf, make_timeline: TimelineOf
) -> None:
    """Work phases alone: accepted on their markers, with no JSON and no claims."""
    task = Task(name="t", phases=(Phase(name="think", instructions="Think."),))

    judgment = judge(
        task,
        make_transcript(AssistantText(text="PHASE 1 COMPLETE: done")),
        make_timeline((0, BEFORE)),
        workdir=WORKDIR,
    )

    assert judgment.accepted
    assert (judgment.output, judgment.files_claimed) == (None, ())


# ---- real CLI transcripts (tests/fixtures/transcripts) ---------------------------------------


def recorded(name: str) -> Transcript:
    """A transcript recorded from the real Claude Code CLI."""
    return parse_stream_json(
        (TRANSCRIPTS / name).read_text(encoding="utf-8").splitlines()
    ).transcript


@pytest.mark.parametrize(
    ("name", "disk_after", "expected"),
    [
        ("edit_then_json.jsonl", AFTER, [[], []]),
        (
            "json_without_edit.jsonl",
            BEFORE,
            [
                [IssueCode.TOOL_NOT_USED, IssueCode.NO_CHANGES],
                [IssueCode.CLAIMED_NOT_CHANGED],
            ],
        ),
    ],
)
def test_recorded_cli_transcripts_are_judged_on_their_evidence(
    fix_task: Task,
    make_timeline: TimelineOf,
    name: str,
    disk_after: dict[str, str],
    expected: list[list[IssueCode]],
) -> None:
    """A real edit run is accepted; a real run that only claimed the edit is not."""
    transcript = recorded(name)
    timeline = make_timeline((0, BEFORE), (len(transcript), disk_after))
    assert transcript.cwd is not None

    judgment = judge(fix_task, transcript, timeline, workdir=transcript.cwd)

    assert phase_codes(judgment) == expected


def test_a_protected_file_changed_and_left_so_fails_the_phase_that_changed_it(
    three_phase_task: Task,
    make_transcript: TranscriptOf,
    tool_pair: ToolPair,
    make_timeline: TimelineOf,
) -> None:
    """Changed by Bash in phase 2: phase 2's issue; neither the files nor the claims count it."""
    task = three_phase_task.model_copy(update={"protect": ("tests/**",)})
    transcript = make_transcript(
        UserText(text="prompt"),
        tool_pair("Edit", file_path=APP, old_string="eval(x)", new_string="literal_eval(x)"),
        AssistantText(text=MARKER_1),
        tool_pair("Bash", command="sed -i s/1/2/ tests/test_app.py"),
        AssistantText(text=MARKER_2),
        AssistantText(text=fenced({**GOOD, "files_changed": ["app.py", "tests/test_app.py"]})),
    )
    before = {**BEFORE, "tests/test_app.py": "t1"}
    after = {**AFTER, "tests/test_app.py": "t2"}
    timeline = make_timeline((0, before), (4, {**before, **AFTER}), (7, after), (8, after))

    judgment = judge(task, transcript, timeline, workdir=WORKDIR)

    assert phase_codes(judgment) == [[], [IssueCode.PROTECTED_PATH_CHANGED], []]
    assert judgment.phases[1].issues[0].path == "tests/test_app.py"
    assert judgment.files_changed == ("app.py",)
    assert [p.files_changed for p in judgment.phases] == [("app.py",), (), ()]
    assert judgment.reconciliation.changed_not_claimed == []
    assert judgment.reconciliation.claimed_not_changed == []
    assert judgment.reconciliation.change_without_tool == []


def test_a_protected_file_changed_then_put_back_is_no_issue_and_no_ones_work(
    three_phase_task: Task,
    make_transcript: TranscriptOf,
    tool_pair: ToolPair,
    make_timeline: TimelineOf,
) -> None:
    """Edited in phase 1, restored in phase 2: the run leaves it as it was."""
    task = three_phase_task.model_copy(update={"protect": ("tests",)})
    transcript = make_transcript(
        UserText(text="prompt"),
        tool_pair("Edit", file_path=APP, old_string="eval(x)", new_string="literal_eval(x)"),
        tool_pair("Edit", file_path=f"{WORKDIR}/tests/test_app.py", old_string="1",
                  new_string="2"),
        AssistantText(text=MARKER_1),
        tool_pair("Bash", command="git checkout tests"),
        AssistantText(text=MARKER_2),
        AssistantText(text=fenced(GOOD)),
    )  # fmt: skip
    before = {**BEFORE, "tests/test_app.py": "t1"}
    changed = {**AFTER, "tests/test_app.py": "t2"}
    restored = {**AFTER, "tests/test_app.py": "t1"}
    timeline = make_timeline((0, before), (6, changed), (9, restored), (10, restored))

    judgment = judge(task, transcript, timeline, workdir=WORKDIR)

    assert judgment.accepted, judgment.issues
    assert [p.files_changed for p in judgment.phases] == [("app.py",), (), ()]
    assert judgment.reconciliation.tool_reported == ["app.py"]
    assert judgment.reconciliation.edit_not_on_disk == []


def test_a_read_only_task_fails_on_a_protected_change_twice_over(
    fix_task: Task, make_transcript: TranscriptOf, make_timeline: TimelineOf
) -> None:
    """read_only forbids every change; protect names the file."""
    task = fix_task.model_copy(update={"protect": ("util.py",), "read_only": True})
    transcript = make_transcript(
        UserText(text="prompt"), AssistantText(text=MARKER_1), AssistantText(text=fenced(GOOD))
    )
    after = {**BEFORE, "util.py": "u2"}
    judgment = judge(task, transcript, make_timeline((0, BEFORE), (2, after), (3, after)),
                     workdir=WORKDIR)  # fmt: skip
    codes = {issue.code for issue in judgment.issues}
    assert {IssueCode.READ_ONLY_VIOLATED, IssueCode.PROTECTED_PATH_CHANGED} <= codes


@pytest.mark.parametrize("ignores_case", [True, False])
def test_on_a_file_system_that_ignores_case_a_name_in_another_case_is_the_changed_file(
    fix_task: Task,
    make_transcript: TranscriptOf,
    tool_pair: ToolPair,
    make_timeline: TimelineOf,
    monkeypatch: pytest.MonkeyPatch,
    ignores_case: bool,
) -> None:
    """macOS and Windows by default: ``App.py`` edited and claimed is the ``app.py`` that
    changed, no mismatch; where case counts it is another file, and the rules say so."""
    monkeypatch.setattr("phasegate.validators.judge.names_ignore_case", lambda _: ignores_case)
    claimed = {**GOOD, "files_changed": ["APP.PY"]}
    transcript = make_transcript(
        UserText(text="prompt"),
        tool_pair("Edit", file_path=f"{WORKDIR}/App.py", old_string="eval", new_string="x"),
        AssistantText(text=MARKER_1),
        AssistantText(text=fenced(claimed)),
    )
    timeline = make_timeline((0, BEFORE), (4, AFTER), (5, AFTER))

    judgment = judge(fix_task, transcript, timeline, workdir=WORKDIR)

    mismatches = {
        IssueCode.EDIT_NOT_ON_DISK,
        IssueCode.CHANGE_WITHOUT_TOOL,
        IssueCode.CLAIMED_NOT_CHANGED,
        IssueCode.CHANGED_NOT_CLAIMED,
    }
    found = {issue.code for issue in judgment.issues} & mismatches
    if ignores_case:
        assert judgment.accepted and found == set()
        assert judgment.files_claimed == ("app.py",)
        assert judgment.reconciliation.consistent
    else:
        assert not judgment.accepted
        assert IssueCode.CLAIMED_NOT_CHANGED in found
        assert judgment.files_claimed == ("APP.PY",)


def test_a_work_directory_recorded_on_windows_compares_names_without_case(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair, make_timeline: TimelineOf
) -> None:
    """A transcript recorded in ``C:\\proj`` is judged as Windows would, on any machine."""
    transcript = make_transcript(
        UserText(text="prompt"),
        tool_pair("Edit", file_path="C:\\proj\\APP.py", old_string="eval", new_string="x"),
        AssistantText(text=MARKER_1),
        AssistantText(text=fenced({**GOOD, "files_changed": ["App.PY"]})),
    )
    timeline = make_timeline((0, BEFORE), (4, AFTER), (5, AFTER))

    judgment = judge(fix_task, transcript, timeline, workdir="C:\\proj")

    assert judgment.accepted, judgment.issues
    assert judgment.files_claimed == ("app.py",)
