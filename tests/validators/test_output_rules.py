"""Output-phase rules: JSON present, schema, placeholders, file claims (validators.output)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from phasegate.evidence.transcript import AssistantText, ToolCall, ToolResult, Transcript, UserText
from phasegate.phases.model import Task
from phasegate.validators.issues import Issue, IssueCode
from phasegate.validators.output import (
    check_claims,
    check_placeholders,
    check_schema,
    claimed_files,
)
from phasegate.validators.summary import check_summary_present, summary_value
from phasegate.validators.windows import phase_windows

MARKER_1 = "PHASE 1 COMPLETE: Files have been edited"
GOOD = {"files_changed": ["app.py"], "description": "Replaced eval with ast.literal_eval."}
WORKDIR = "/srv/project"

TranscriptOf = Callable[..., Transcript]
ToolPair = Callable[..., tuple[ToolCall, ToolResult]]


def fenced(value: object) -> str:
    """``value`` as the model usually prints it: a ```json block."""
    return f"```json\n{json.dumps(value, indent=2)}\n```"


def output_json(
    task: Task, transcript: Transcript, *, markers: bool = True
) -> tuple[dict[str, Any] | None, list[Issue]]:
    """The output phase's JSON and JSON issues for ``transcript``."""
    window = phase_windows(task, transcript, markers=markers)[-1]
    answer, issues = check_summary_present(
        window, transcript, markers=markers, completion=task.completion
    )
    return summary_value(answer), issues


def codes(issues: list[Issue]) -> list[IssueCode]:
    """The codes of ``issues``, in order."""
    return [issue.code for issue in issues]


# ---- json_missing / json_invalid / json_before_marker ---------------------------------------


def test_json_printed_after_the_last_marker_is_the_output(
    fix_task: Task, make_transcript: TranscriptOf
) -> None:
    """A fenced object after the marker is taken, with no issue."""
    transcript = make_transcript(AssistantText(text=MARKER_1), AssistantText(text=fenced(GOOD)))

    assert output_json(fix_task, transcript) == (GOOD, [])


def test_json_in_the_same_block_right_after_the_marker_line_counts(
    fix_task: Task, make_transcript: TranscriptOf
) -> None:
    """A model that prints the marker and the JSON together has printed the JSON after it."""
    transcript = make_transcript(AssistantText(text=f"{MARKER_1}\n\n{json.dumps(GOOD)}"))

    assert output_json(fix_task, transcript) == (GOOD, [])


def test_no_json_at_all_is_json_missing(fix_task: Task, make_transcript: TranscriptOf) -> None:
    """Nothing that looks like JSON anywhere: json_missing, a missing item."""
    transcript = make_transcript(AssistantText(text=f"{MARKER_1}\nI changed app.py."))

    value, issues = output_json(fix_task, transcript)

    assert value is None
    assert codes(issues) == [IssueCode.JSON_MISSING]
    assert (issues[0].phase, issues[0].group, issues[0].field) == (2, "missing", "json")


def test_json_in_a_tool_result_or_user_message_is_not_the_output(
    fix_task: Task, make_transcript: TranscriptOf, tool_pair: ToolPair
) -> None:
    """Only assistant text can carry the answer; JSON the agent read or was sent is not it."""
    transcript = make_transcript(
        AssistantText(text=MARKER_1),
        tool_pair("Read", result=json.dumps(GOOD), file_path="/srv/project/out.json"),
        UserText(text=fenced(GOOD)),
    )

    assert codes(output_json(fix_task, transcript)[1]) == [IssueCode.JSON_MISSING]


def test_json_that_does_not_parse_is_json_invalid(
    fix_task: Task, make_transcript: TranscriptOf
) -> None:
    """A broken object after the marker: json_invalid, quoting what was printed."""
    broken = '```json\n{"files_changed": ["app.py"], description: "x"}\n```'
    transcript = make_transcript(AssistantText(text=MARKER_1), AssistantText(text=broken))

    value, issues = output_json(fix_task, transcript)

    assert value is None
    assert codes(issues) == [IssueCode.JSON_INVALID]
    assert issues[0].group == "invalid"
    assert issues[0].provided == '{"files_changed": ["app.py"], description: "x"}'


def test_the_last_json_in_the_window_is_the_one_judged(
    fix_task: Task, make_transcript: TranscriptOf
) -> None:
    """A good object followed by a broken one is judged on the broken one."""
    transcript = make_transcript(
        AssistantText(text=MARKER_1),
        AssistantText(text=fenced(GOOD)),
        AssistantText(text='```json\n{"oops": \n```'),
    )

    assert codes(output_json(fix_task, transcript)[1]) == [IssueCode.JSON_INVALID]


def test_json_only_before_the_marker_is_json_before_marker(
    fix_task: Task, make_transcript: TranscriptOf
) -> None:
    """The seed-002 failure: the summary came before the work was marked done."""
    transcript = make_transcript(AssistantText(text=fenced(GOOD)), AssistantText(text=MARKER_1))

    value, issues = output_json(fix_task, transcript)

    assert value is None
    assert codes(issues) == [IssueCode.JSON_BEFORE_MARKER]


def test_json_above_the_marker_line_in_the_same_block_is_before_the_marker(
    fix_task: Task, make_transcript: TranscriptOf
) -> None:
    """Within one block, order still matters: JSON then the marker line is too early."""
    transcript = make_transcript(AssistantText(text=f"{json.dumps(GOOD)}\n{MARKER_1}"))

    assert codes(output_json(fix_task, transcript)[1]) == [IssueCode.JSON_BEFORE_MARKER]


def test_json_with_no_marker_at_all_is_before_the_marker(
    fix_task: Task, make_transcript: TranscriptOf
) -> None:
    """Without the work phase's marker, any JSON came before it."""
    transcript = make_transcript(AssistantText(text=fenced(GOOD)))

    assert codes(output_json(fix_task, transcript)[1]) == [IssueCode.JSON_BEFORE_MARKER]


def test_json_reprinted_after_the_marker_supersedes_an_early_one(
    fix_task: Task, make_transcript: TranscriptOf
) -> None:
    """An early draft is forgotten once the JSON is printed again after the marker."""
    early = {"files_changed": ["TBD"], "description": "TODO"}
    transcript = make_transcript(
        AssistantText(text=fenced(early)),
        AssistantText(text=MARKER_1),
        AssistantText(text=fenced(GOOD)),
    )

    assert output_json(fix_task, transcript) == (GOOD, [])


def test_without_markers_json_anywhere_is_the_output(
    fix_task: Task, make_transcript: TranscriptOf
) -> None:
    """The unstructured baseline takes the last JSON of the whole transcript."""
    transcript = make_transcript(AssistantText(text=fenced(GOOD)), AssistantText(text="Bye."))

    assert output_json(fix_task, transcript, markers=False) == (GOOD, [])


# ---- schema_violation -----------------------------------------------------------------------


def schema_of(task: Task) -> dict[str, Any]:
    """The output schema of ``task``."""
    assert task.output_phase is not None
    assert task.output_phase.output_schema is not None
    return task.output_phase.output_schema


def test_json_that_fits_the_schema_has_no_schema_issue(fix_task: Task) -> None:
    """A valid object passes."""
    assert check_schema(2, GOOD, schema_of(fix_task)) == []


def test_a_wrong_type_is_an_invalid_schema_violation(fix_task: Task) -> None:
    """A string where a list belongs: invalid group, the JSON path, what was given."""
    (issue,) = check_schema(2, {**GOOD, "files_changed": "app.py"}, schema_of(fix_task))

    assert issue.code is IssueCode.SCHEMA_VIOLATION
    assert (issue.group, issue.field, issue.phase) == ("invalid", "$.files_changed", 2)
    assert issue.provided == '"app.py"'


def test_a_missing_required_field_is_a_missing_schema_violation(fix_task: Task) -> None:
    """An absent required field is reported in the missing group under its own path."""
    (issue,) = check_schema(2, {"files_changed": ["app.py"]}, schema_of(fix_task))

    assert issue.code is IssueCode.SCHEMA_VIOLATION
    assert (issue.group, issue.field) == ("missing", "$.description")
    assert issue.provided is None


def test_an_extra_field_is_an_unknown_schema_violation(fix_task: Task) -> None:
    """additionalProperties: false turns each extra key into an 'unknown' item."""
    issues = check_schema(2, {**GOOD, "notes": "x", "author": "me"}, schema_of(fix_task))

    assert [(i.code, i.group, i.field) for i in issues] == [
        (IssueCode.SCHEMA_VIOLATION, "unknown", "$.author"),
        (IssueCode.SCHEMA_VIOLATION, "unknown", "$.notes"),
    ]


def test_an_item_of_the_wrong_type_is_reported_at_its_index(fix_task: Task) -> None:
    """Errors inside arrays carry the item's index in the path."""
    (issue,) = check_schema(2, {**GOOD, "files_changed": ["app.py", 3]}, schema_of(fix_task))

    assert issue.field == "$.files_changed[1]"


def test_every_violation_is_reported(fix_task: Task) -> None:
    """Several problems give several issues, one per problem."""
    issues = check_schema(2, {"files_changed": [], "extra": 1}, schema_of(fix_task))

    assert sorted(i.group for i in issues) == ["invalid", "missing", "unknown"]


# ---- placeholder_value ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "placeholder",
    [
        "TBD",
        "TODO",
        "todo",
        "...",
        "…",
        "<path>",
        "<file name here>",
        "TODO: describe the fix",
        "todo: fill in",
        "TBD later",
    ],
)
def test_a_placeholder_value_is_reported(fix_task: Task, placeholder: str) -> None:
    """TBD, TODO, ellipses and <angle-bracket> stand-ins are not real values."""
    (issue,) = check_placeholders(2, {**GOOD, "description": placeholder}, schema_of(fix_task))

    assert issue.code is IssueCode.PLACEHOLDER_VALUE
    assert (issue.field, issue.provided, issue.group) == ("$.description", placeholder, "invalid")


def test_a_placeholder_inside_a_list_is_reported_at_its_index(fix_task: Task) -> None:
    """Placeholders are found at any depth."""
    value = {**GOOD, "files_changed": ["app.py", "<path>"]}

    (issue,) = check_placeholders(2, value, schema_of(fix_task))

    assert issue.field == "$.files_changed[1]"


def test_an_empty_required_string_is_a_placeholder(fix_task: Task) -> None:
    """A required field given as "" or whitespace says nothing."""
    issues = check_placeholders(2, {**GOOD, "description": "  "}, schema_of(fix_task))

    assert codes(issues) == [IssueCode.PLACEHOLDER_VALUE]


def test_an_empty_optional_string_is_not_a_placeholder() -> None:
    """Only required fields must say something."""
    schema = {"type": "object", "properties": {"note": {"type": "string"}}}

    assert check_placeholders(2, {"note": ""}, schema) == []


def test_required_fields_behind_a_ref_are_recognized() -> None:
    """pydantic-style schemas ($defs + $ref) still mark required fields."""
    schema = {
        "type": "object",
        "required": ["fix"],
        "properties": {"fix": {"$ref": "#/$defs/Fix"}},
        "$defs": {
            "Fix": {
                "type": "object",
                "required": ["why"],
                "properties": {"why": {"type": "string"}},
            }
        },
    }

    assert [i.field for i in check_placeholders(2, {"fix": {"why": ""}}, schema)] == ["$.fix.why"]


@pytest.mark.parametrize(
    "value",
    [
        "Replaced eval with ast.literal_eval so only literals are evaluated.",
        "Wait... it was eval.",
        "Todo list items are now escaped before rendering.",
        "TODO.md",
        "todo.py",
        "src/todo/views.py",
        "a <b> tag",
    ],
)
def test_a_real_value_is_not_a_placeholder(fix_task: Task, value: str) -> None:
    """Ordinary text and file names, even ones starting with 'todo', pass."""
    data = {"files_changed": [value], "description": value}

    assert check_placeholders(2, data, schema_of(fix_task)) == []


# ---- claimed_not_changed / changed_not_claimed ----------------------------------------------


@pytest.mark.parametrize(
    "claimed",
    [
        ["app.py"],
        ["./app.py"],
        [f"{WORKDIR}/app.py"],
        [f"{WORKDIR}//lib/../app.py"],
        ["app.py", "./app.py"],
    ],
)
def test_claims_that_match_the_disk_after_normalization_pass(claimed: list[str]) -> None:
    """./, absolute paths inside the work dir and redundant segments all name app.py."""
    value = {"files_changed": claimed}

    assert check_claims(2, "files_changed", value, ("app.py",), WORKDIR) == []


def test_backslash_paths_are_normalized_to_posix() -> None:
    """A Windows-style relative path names the same file."""
    value = {"files_changed": ["src\\pkg\\app.py"]}

    assert check_claims(2, "files_changed", value, ("src/pkg/app.py",), WORKDIR) == []


def test_a_claimed_file_that_did_not_change_is_claimed_not_changed() -> None:
    """Listing a file the disk says is untouched is an invalid claim, per file."""
    value = {"files_changed": ["app.py", "./util.py"]}

    (issue,) = check_claims(2, "files_changed", value, ("app.py",), WORKDIR)

    assert issue.code is IssueCode.CLAIMED_NOT_CHANGED
    assert (issue.field, issue.provided, issue.group) == ("$.files_changed", "util.py", "invalid")


def test_a_changed_file_that_is_not_claimed_is_changed_not_claimed() -> None:
    """A file the disk says changed must be listed; its absence is a missing item."""
    value = {"files_changed": ["app.py"]}

    (issue,) = check_claims(2, "files_changed", value, ("app.py", "tests/test_app.py"), WORKDIR)

    assert issue.code is IssueCode.CHANGED_NOT_CLAIMED
    assert issue.group == "missing"
    assert "tests/test_app.py" in issue.message


def test_each_claim_issue_names_its_file_in_the_work_directory() -> None:
    """``path`` is the work-directory file (CI annotates it); a claim outside the work
    directory, or of the directory itself, names none."""
    value = {"files_changed": ["./util.py", "/etc/passwd", "../other/x.py", ".", "C:\\a.py"]}

    issues = check_claims(2, "files_changed", value, ("app.py",), WORKDIR)

    assert sorted((i.code.value, i.provided, i.path) for i in issues) == [
        ("changed_not_claimed", None, "app.py"),
        ("claimed_not_changed", ".", None),
        ("claimed_not_changed", "../other/x.py", None),
        ("claimed_not_changed", "/etc/passwd", None),
        ("claimed_not_changed", "C:\\a.py", None),
        ("claimed_not_changed", "util.py", "util.py"),
    ]


def test_claims_that_are_not_a_list_of_strings_are_left_to_the_schema_rule() -> None:
    """A wrongly typed claim field is not reconciled (the schema rule reports it)."""
    assert check_claims(2, "files_changed", {"files_changed": "app.py"}, ("x",), WORKDIR) == []


def test_claimed_files_are_normalized_sorted_and_unique() -> None:
    """The report's files_claimed is the normalized set of claims."""
    value = {"files_changed": ["./b.py", f"{WORKDIR}/a.py", "a.py", 7]}

    assert claimed_files("files_changed", value, WORKDIR) == ["a.py", "b.py"]
    assert claimed_files(None, value, WORKDIR) == []
    assert claimed_files("files_changed", None, WORKDIR) == []
