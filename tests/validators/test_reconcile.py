"""Tools, disk and claim compared (phasegate.validators.reconcile), and the answer rules that
look past the schema (phasegate.validators.output: wrapped answers, runtime refusals)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from phasegate.evidence.transcript import ToolCall, ToolResult, Transcript
from phasegate.phases.model import Task
from phasegate.validators.issues import Issue, IssueCode
from phasegate.validators.output import (
    check_runtime_rejection,
    check_schema,
    check_wrapped,
    claimed_files,
)
from phasegate.validators.reconcile import (
    FileReconciliation,
    edit_positions,
    reconcile,
    reconciliation_findings,
    tool_reported_paths,
)
from phasegate.validators.tools import tool_calls

WORKDIR = "/srv/project"
GOOD = {"files_changed": ["app.py"], "description": "Replaced eval with ast.literal_eval."}

TranscriptOf = Callable[..., Transcript]
ToolPair = Callable[..., tuple[ToolCall, ToolResult]]


def schema_of(task: Task) -> dict[str, Any]:
    """The output schema of ``task``."""
    assert task.output_phase is not None
    assert task.output_phase.output_schema is not None
    return task.output_phase.output_schema


# ---- tool_reported_paths / edit_positions --------------------------------------------------


def test_tool_reported_paths_are_the_files_successful_editing_calls_name(
    make_transcript: TranscriptOf, tool_pair: ToolPair
) -> None:
    """Only successful Edit/MultiEdit/Write/NotebookEdit calls count; paths are normalized."""
    transcript = make_transcript(
        tool_pair("Edit", file_path=f"{WORKDIR}/app.py"),
        tool_pair("Write", file_path="./src//new.py"),
        tool_pair("MultiEdit", file_path=f"{WORKDIR}/lib/../util.py"),
        tool_pair("NotebookEdit", notebook_path="nb/analysis.ipynb"),
        tool_pair("Edit", ok=False, result="old_string not found", file_path="failed.py"),
        tool_pair("Read", file_path="read.py"),
        tool_pair("Bash", command="touch shell.py"),
        tool_pair("Write", file_path="/etc/passwd"),
        tool_pair("Edit", file_path="../sibling/x.py"),
        tool_pair("Write", file_path=WORKDIR),
        ToolCall(id="toolu_unanswered", name="Edit", input={"file_path": "pending.py"}),
    )

    assert tool_reported_paths(tool_calls(transcript), WORKDIR) == [
        "app.py", "nb/analysis.ipynb", "src/new.py", "util.py"
    ]  # fmt: skip


def test_edit_positions_keep_the_last_successful_edit_of_each_file(
    make_transcript: TranscriptOf, tool_pair: ToolPair
) -> None:
    """A later failed edit does not move a file's position; a later successful one does."""
    transcript = make_transcript(
        tool_pair("Edit", file_path="app.py"),                  # 0, 1
        tool_pair("Write", file_path=f"{WORKDIR}/new.py"),      # 2, 3
        tool_pair("Edit", file_path="./app.py"),                # 4, 5
        tool_pair("Edit", ok=False, file_path="app.py"),        # 6, 7
        tool_pair("Bash", command="sed -i s/a/b/ app.py"),      # 8, 9
        tool_pair("Edit", file_path="/elsewhere/app.py"),       # 10, 11
    )  # fmt: skip

    assert edit_positions(tool_calls(transcript), WORKDIR) == {"app.py": 4, "new.py": 2}


def test_edits_recorded_on_windows_are_placed_and_reported_by_relative_path(
    make_transcript: TranscriptOf, tool_pair: ToolPair
) -> None:
    """Drive-letter paths in either case and with either separator name one file, the one git
    shows as reqs/a.md; an edit on another drive is not a file of the work directory."""
    workdir = "C:\\Users\\runner\\proj"
    transcript = make_transcript(
        tool_pair("Edit", file_path="C:/Users/runner/proj/reqs/a.md"),
        tool_pair("Edit", file_path="c:\\users\\runner\\proj\\reqs\\a.md"),
        tool_pair("Write", file_path="D:/other/notes.md"),
    )
    calls = tool_calls(transcript)

    assert tool_reported_paths(calls, workdir) == ["reqs/a.md"]
    assert edit_positions(calls, workdir) == {"reqs/a.md": 2}
    files = reconcile(tool_reported_paths(calls, workdir), ["reqs/a.md"], None)
    assert files.edit_not_on_disk == files.change_without_tool == []


def test_claims_recorded_on_windows_name_the_same_relative_files() -> None:
    """A claim in Windows form (backslashes, drive letter, other case) is the relative path."""
    value = {
        "files_changed": [
            "reqs\\a.md",
            "C:\\Users\\Runner\\proj\\b.md",
            "c:/users/runner/proj/c.md",
        ]
    }

    assert claimed_files("files_changed", value, "C:\\Users\\runner\\proj") == [
        "b.md", "c.md", "reqs/a.md"
    ]  # fmt: skip


# ---- reconcile -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tools", "disk", "claimed", "kind", "paths"),
    [
        (["a.py"], ["a.py", "b.py"], ["a.py", "b.py"], "change_without_tool", ["b.py"]),
        (["a.py", "b.py"], ["a.py"], ["a.py"], "edit_not_on_disk", ["b.py"]),
        (["a.py", "b.py"], ["a.py", "b.py"], ["a.py"], "changed_not_claimed", ["b.py"]),
        (["a.py"], ["a.py"], ["a.py", "b.py"], "claimed_not_changed", ["b.py"]),
    ],
)  # fmt: skip
def test_each_kind_of_difference_is_found_on_its_own(
    tools: list[str], disk: list[str], claimed: list[str], kind: str, paths: list[str]
) -> None:
    """One disagreement fills exactly one difference list and makes the result inconsistent."""
    files = reconcile(tools, disk, claimed)

    differences = {
        name: getattr(files, name)
        for name in (
            "changed_not_claimed", "claimed_not_changed", "edit_not_on_disk", "change_without_tool"
        )
    }  # fmt: skip
    assert differences == {name: paths if name == kind else [] for name in differences}
    assert not files.consistent


def test_reconcile_sorts_and_deduplicates_every_set() -> None:
    """All four differences at once, on unsorted input with repeats."""
    files = reconcile(
        ["z.py", "a.py", "edited.py", "a.py"],
        ["shell.py", "a.py", "z.py", "unclaimed.py"],
        ["ghost.py", "a.py", "z.py", "edited.py"],
    )

    assert files == FileReconciliation(
        tool_reported=["a.py", "edited.py", "z.py"],
        disk_changed=["a.py", "shell.py", "unclaimed.py", "z.py"],
        claimed=["a.py", "edited.py", "ghost.py", "z.py"],
        changed_not_claimed=["shell.py", "unclaimed.py"],
        claimed_not_changed=["edited.py", "ghost.py"],
        edit_not_on_disk=["edited.py"],
        change_without_tool=["shell.py", "unclaimed.py"],
    )


def test_without_a_claims_field_only_tools_and_disk_are_compared() -> None:
    """claimed=None is "no claim", not "claimed nothing": no claim differences at all."""
    files = reconcile(["a.py"], ["a.py", "b.py"], None)

    assert files.claimed is None
    assert (files.changed_not_claimed, files.claimed_not_changed) == ([], [])
    assert files.change_without_tool == ["b.py"]


def test_an_empty_claim_is_a_claim_of_nothing() -> None:
    """claimed=[] differs from None: every change is then unclaimed."""
    files = reconcile(["a.py"], ["a.py"], [])

    assert (files.claimed, files.changed_not_claimed) == ([], ["a.py"])


@pytest.mark.parametrize(
    ("tools", "disk", "claimed"),
    [(["a.py"], ["a.py"], ["a.py"]), (["a.py"], ["a.py"], None), ([], [], [])],
    ids=["all-agree", "no-claims-field", "nothing-at-all"],
)
def test_three_agreeing_sources_are_consistent(
    tools: list[str], disk: list[str], claimed: list[str] | None
) -> None:
    """``consistent`` holds only when no difference list has an entry."""
    assert reconcile(tools, disk, claimed).consistent


def test_reconciliation_findings_give_one_issue_per_path_in_a_fixed_order() -> None:
    """Claim differences first, then tool/disk differences; paths sorted within each code."""
    files = reconcile(["b.py", "edited.py"], ["b.py", "a.py", "z.py"], ["b.py", "ghost.py"])

    findings = reconciliation_findings(files)

    assert [(i.code, i.provided) for i in findings] == [
        (IssueCode.CHANGED_NOT_CLAIMED, "a.py"),
        (IssueCode.CHANGED_NOT_CLAIMED, "z.py"),
        (IssueCode.CLAIMED_NOT_CHANGED, "ghost.py"),
        (IssueCode.EDIT_NOT_ON_DISK, "edited.py"),
        (IssueCode.CHANGE_WITHOUT_TOOL, "a.py"),
        (IssueCode.CHANGE_WITHOUT_TOOL, "z.py"),
    ]
    assert findings[3] == Issue(
        code=IssueCode.EDIT_NOT_ON_DISK,
        message="edited.py: edited by a tool, unchanged on disk.",
        field="files",
        provided="edited.py",
        path="edited.py",
    )
    assert all(i.path == i.provided for i in findings), "each finding names its file"
    assert {(i.phase, i.field) for i in findings} == {(None, "files")}
    assert [i.group for i in findings[:3]] == ["missing", "missing", "invalid"]


def test_a_consistent_reconciliation_has_no_findings() -> None:
    """Nothing to report when the three sources agree."""
    assert reconciliation_findings(reconcile(["a.py"], ["a.py"], ["a.py"])) == []


# ---- check_wrapped -------------------------------------------------------------------------


def test_an_answer_wrapped_in_one_extra_key_is_one_schema_violation_naming_the_key(
    fix_task: Task,
) -> None:
    """Instead of "files_changed is required" and friends: remove the wrapper."""
    wrapped = {"output": GOOD}

    issues = check_wrapped(2, wrapped, schema_of(fix_task))

    (issue,) = issues
    assert (issue.code, issue.phase, issue.field, issue.group) == (
        IssueCode.SCHEMA_VIOLATION, 2, "$.output", "invalid"
    )  # fmt: skip
    assert issue.provided == json.dumps(wrapped)
    assert issue.requirement == 'Remove the "output" wrapper: give the inner object itself.'
    assert issue.message == (
        'The answer is wrapped in an extra {"output": ...} layer; the schema\'s fields '
        "belong at the top level."
    )
    replaced = check_schema(2, wrapped, schema_of(fix_task))
    assert [i.field for i in replaced] == ["$.files_changed", "$.description", "$.output"]


def test_a_single_key_that_is_a_schema_property_is_not_a_wrapper(fix_task: Task) -> None:
    """{"files_changed": {...}} is a wrong field type, for the schema rule to report."""
    assert check_wrapped(2, {"files_changed": GOOD}, schema_of(fix_task)) == []


@pytest.mark.parametrize(
    "value",
    [
        {"output": {"files_changed": [], "description": "Replaced eval."}},
        {"output": {"files_changed": ["app.py"]}},
        {"output": ["app.py"]},
        {"output": GOOD, "note": "x"},
        {},
    ],
    ids=["inner-too-short", "inner-incomplete", "inner-not-an-object", "two-keys", "empty"],
)
def test_an_extra_layer_is_only_reported_when_the_inner_object_would_be_accepted(
    fix_task: Task, value: dict[str, Any]
) -> None:
    """Otherwise the plain schema issues say more than "remove the wrapper" would."""
    assert check_wrapped(2, value, schema_of(fix_task)) == []


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object"},
        {"type": "object", "properties": {"notes": {"type": "string"}}},
    ],
    ids=["any-object", "optional-fields-only"],
)
def test_an_answer_the_schema_accepts_as_it_is_is_not_called_wrapped(
    schema: dict[str, Any],
) -> None:
    """A permissive schema accepts {"result": {...}} itself; the wrapper rule only replaces
    schema issues, it never rejects an answer the schema accepts."""
    value = {"result": {"notes": "done"}}
    assert check_schema(1, value, schema) == []

    assert check_wrapped(1, value, schema) == []


def test_every_missing_required_field_is_reported_once(fix_task: Task) -> None:
    """jsonschema raises one "required" error per absent field; each field is one issue."""
    issues = check_schema(2, {}, schema_of(fix_task))

    assert [(i.field, i.message, i.group) for i in issues] == [
        ("$.files_changed", "$.files_changed is required.", "missing"),
        ("$.description", "$.description is required.", "missing"),
    ]


# ---- check_runtime_rejection ---------------------------------------------------------------


def test_a_runtime_refusal_no_other_rule_explains_is_a_schema_violation() -> None:
    """The runtime said no and nothing else did: its reason becomes the issue."""
    (issue,) = check_runtime_rejection(2, "Output does not match required schema", [])

    assert (issue.code, issue.phase, issue.field, issue.provided) == (
        IssueCode.SCHEMA_VIOLATION, 2, "json", "Output does not match required schema"
    )  # fmt: skip
    assert issue.message == (
        "The agent runtime refused this structured output: Output does not match required schema"
    )
    assert issue.requirement == "Give an object that satisfies the output schema exactly."


def test_a_runtime_refusal_adds_nothing_when_another_rule_already_found_an_issue(
    fix_task: Task,
) -> None:
    """The schema rule's own issues already say why; the refusal would repeat them."""
    found = check_schema(2, {"files_changed": ["app.py"]}, schema_of(fix_task))
    assert found

    assert check_runtime_rejection(2, "does not match", found) == []


def test_no_refusal_means_no_issue() -> None:
    """An answer the runtime accepted (or that did not come through the runtime) is fine."""
    assert check_runtime_rejection(2, None, []) == []
