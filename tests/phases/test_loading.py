"""Loading task files (phasegate.phases.loading): the contract of DESIGN.md, and its errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from phasegate.errors import TaskFileError, UsageError
from phasegate.phases.loading import load_task, task_from_mapping
from phasegate.phases.model import Task

EXAMPLE_TASK = Path(__file__).resolve().parents[2] / "examples" / "fix-vulnerability" / "task.yaml"

DESIGN_YAML = """\
name: fix-vulnerability
description: Fix the code-injection bug in app.py      # optional
phases:
  - name: edit
    instructions: |
      Find the vulnerability and fix it with the Edit or MultiEdit tool.
    marker: Files have been edited       # text after "PHASE 1 COMPLETE:"; a default exists
    require_tools: [Edit, MultiEdit]     # optional: at least one successful call of these
    require_changes: true                # optional: files on disk must change in this phase
  - name: summary
    instructions: Report what you changed.
    output_schema:                       # inline JSON Schema, or a path relative to this file
      type: object
      required: [files_changed, description]
      properties:
        files_changed: {type: array, items: {type: string}}
        description: {type: string}
    claims_files: files_changed          # optional: the field listing changed files
"""

SUMMARY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["files_changed", "description"],
    "properties": {
        "files_changed": {"type": "array", "items": {"type": "string"}},
        "description": {"type": "string"},
    },
}

DESIGN_DATA: dict[str, Any] = {
    "name": "fix-vulnerability",
    "description": "Fix the code-injection bug in app.py",
    "phases": [
        {
            "name": "edit",
            "instructions": "Find the vulnerability and fix it with the Edit or MultiEdit tool.\n",
            "marker": "Files have been edited",
            "require_tools": ["Edit", "MultiEdit"],
            "require_changes": True,
        },
        {
            "name": "summary",
            "instructions": "Report what you changed.",
            "output_schema": SUMMARY_SCHEMA,
            "claims_files": "files_changed",
        },
    ],
}

MINIMAL_WORK_PHASE = "  - name: edit\n    instructions: Fix it.\n"


def write(directory: Path, name: str, text: str) -> Path:
    """Write ``text`` to ``directory/name`` and return the path."""
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def load_error(path: Path) -> TaskFileError:
    """The TaskFileError that loading ``path`` raises."""
    with pytest.raises(TaskFileError) as caught:
        load_task(path)
    return caught.value


def assert_design_task(task: Task) -> None:
    """``task`` is the fix-vulnerability task exactly as DESIGN.md describes it."""
    edit, summary = task.phases
    assert task.name == "fix-vulnerability"
    assert task.description == "Fix the code-injection bug in app.py"
    assert edit.marker == "Files have been edited"
    assert edit.require_tools == ("Edit", "MultiEdit")
    assert edit.require_changes is True
    assert not edit.is_output
    assert summary.output_schema == SUMMARY_SCHEMA
    assert summary.claims_files == "files_changed"
    assert task.output_phase is summary


def test_the_yaml_task_file_of_the_design_loads(tmp_path: Path) -> None:
    """The YAML example of DESIGN.md, comments and all, loads into the expected task."""
    assert_design_task(load_task(write(tmp_path, "task.yaml", DESIGN_YAML)))


def test_the_json_task_file_of_the_design_loads(tmp_path: Path) -> None:
    """The same task written as JSON loads into the same model."""
    path = write(tmp_path, "task.json", json.dumps(DESIGN_DATA, indent=2))

    task = load_task(path)

    assert_design_task(task)
    assert task == load_task(write(tmp_path, "task.yaml", DESIGN_YAML))


def test_the_bundled_example_task_loads_and_matches_the_test_fixture(fix_task: Task) -> None:
    """examples/fix-vulnerability/task.yaml loads, and the shared fixture mirrors it."""
    assert load_task(EXAMPLE_TASK) == fix_task


def test_a_path_string_is_accepted(tmp_path: Path) -> None:
    """load_task takes a str as well as a Path."""
    assert_design_task(load_task(str(write(tmp_path, "task.yml", DESIGN_YAML))))


@pytest.mark.parametrize("schema_name", ["schemas/summary.json", "schemas/summary.yaml"])
def test_an_output_schema_path_is_read_relative_to_the_task_file(
    tmp_path: Path, schema_name: str
) -> None:
    """output_schema: <path> loads that JSON or YAML file, relative to the task file's folder."""
    task_dir = tmp_path / "tasks"
    dump = json.dumps if schema_name.endswith(".json") else yaml.safe_dump
    schema_text = dump(SUMMARY_SCHEMA)
    write(task_dir, schema_name, schema_text)
    text = DESIGN_YAML.split("    output_schema:")[0] + (
        f"    output_schema: {schema_name}\n    claims_files: files_changed\n"
    )

    task = load_task(write(task_dir, "task.yaml", text))

    assert task.phases[1].output_schema == SUMMARY_SCHEMA


def test_a_schema_path_in_task_data_uses_the_given_source_folder(tmp_path: Path) -> None:
    """task_from_mapping resolves a schema path against the folder of ``source``."""
    write(tmp_path, "s.json", json.dumps(SUMMARY_SCHEMA))
    summary = {"name": "summary", "instructions": "Report.", "output_schema": "s.json"}
    data = {**DESIGN_DATA, "phases": [DESIGN_DATA["phases"][0], summary]}

    task = task_from_mapping(data, source=tmp_path / "task.yaml")

    assert task.phases[1].output_schema == SUMMARY_SCHEMA


class Summary(BaseModel):
    """The summary of DESIGN.md as a pydantic model."""

    files_changed: list[str]
    description: str


def test_a_pydantic_model_may_stand_in_for_the_output_schema_from_python() -> None:
    """Task data built in Python may give a model class; its JSON Schema is used."""
    summary = {"name": "summary", "instructions": "Report.", "output_schema": Summary}
    data = {**DESIGN_DATA, "phases": [DESIGN_DATA["phases"][0], summary]}

    task = task_from_mapping(data)

    assert task.phases[1].output_schema == Summary.model_json_schema()
    assert task.phases[1].output_schema["required"] == ["files_changed", "description"]


def test_task_data_with_an_error_names_the_task_instead_of_a_file() -> None:
    """Without a source file, the error points at <task> and still names the field."""
    with pytest.raises(TaskFileError) as caught:
        task_from_mapping({"name": "t", "phases": "nope"})

    assert caught.value.path is None
    assert str(caught.value) == "<task>: phases: must be a list"


def test_a_task_file_error_is_a_usage_error_with_exit_code_2(tmp_path: Path) -> None:
    """Bad input exits with 2, like every usage error."""
    error = load_error(tmp_path / "missing.yaml")

    assert isinstance(error, UsageError)
    assert error.exit_code == 2


def test_a_missing_file_is_reported_by_name(tmp_path: Path) -> None:
    """A task file that does not exist names itself and says so."""
    path = tmp_path / "missing.yaml"

    error = load_error(path)

    assert error.path == path
    assert str(error) == f"{path}: file not found"


def test_a_directory_is_not_a_task_file(tmp_path: Path) -> None:
    """Pointing at a folder says a YAML or JSON file is expected."""
    assert "is a directory, not a regular file; expected a YAML or JSON file" in str(
        load_error(tmp_path)
    )


def test_a_yaml_syntax_error_names_the_file_and_the_line(tmp_path: Path) -> None:
    """Broken YAML reports the file and where the parser stopped."""
    path = write(tmp_path, "task.yaml", "name: t\nphases: [\n  {name: a\n")

    error = load_error(path)

    assert str(error).startswith(f"{path}: invalid YAML: ")
    assert "(line " in str(error)
    assert error.field is None


def test_a_json_syntax_error_names_the_file_line_and_column(tmp_path: Path) -> None:
    """Broken JSON reports the file, the line and the column."""
    path = write(tmp_path, "task.json", '{"name": "t",\n "phases": [}')

    error = load_error(path)

    assert str(error) == f"{path}: invalid JSON at line 2, column 13: Expecting value"


def test_a_json_suffix_means_json_even_when_the_text_is_yaml(tmp_path: Path) -> None:
    """The .json suffix chooses the JSON parser, so YAML content is a syntax error there."""
    assert "invalid JSON" in str(load_error(write(tmp_path, "task.json", DESIGN_YAML)))


@pytest.mark.parametrize(
    ("text", "found"),
    [("- a\n- b\n", "a list"), ("just text\n", "a str"), ("", "an empty file")],
)
def test_the_top_level_must_be_a_mapping(tmp_path: Path, text: str, found: str) -> None:
    """A list, a scalar or an empty file is refused, saying what was found."""
    path = write(tmp_path, "task.yaml", text)

    assert str(load_error(path)) == f"{path}: expected a mapping at the top level, found {found}"


def test_an_unknown_phase_key_lists_the_known_keys(tmp_path: Path) -> None:
    """A misspelt phase key is named with its location and the keys that exist."""
    path = write(tmp_path, "task.yaml", f"name: t\nphases:\n{MINIMAL_WORK_PHASE}    requires: x\n")

    error = load_error(path)

    assert error.field == "phases.0.requires"
    assert str(error) == (
        f"{path}: phases.0.requires: is not a known key; expected one of: name, instructions, "
        "marker, require_tools, require_changes, output_schema, claims_files, structured_output, "
        "allow_tools, checks"
    )


def test_an_unknown_top_level_key_lists_the_task_keys(tmp_path: Path) -> None:
    """A misspelt top-level key lists name, description and phases."""
    path = write(tmp_path, "task.yaml", f"name: t\ntitle: x\nphases:\n{MINIMAL_WORK_PHASE}")

    error = load_error(path)

    assert error.field == "title"
    assert "is not a known key; expected one of: name, description, phases" in str(error)


@pytest.mark.parametrize(
    ("line", "field", "expected"),
    [
        ("    require_tools: 5\n", "phases.0.require_tools", "must be a list"),
        ("    require_changes: maybe\n", "phases.0.require_changes", "must be true or false"),
        ("    marker: [a, b]\n", "phases.0.marker", "must be a string"),
    ],
)
def test_a_value_of_the_wrong_type_names_the_field_and_the_expected_type(
    tmp_path: Path, line: str, field: str, expected: str
) -> None:
    """A wrong type is reported once, at its field, in plain words."""
    path = write(tmp_path, "task.yaml", f"name: t\nphases:\n{MINIMAL_WORK_PHASE}{line}")

    error = load_error(path)

    assert error.field == field
    assert str(error) == f"{path}: {field}: {expected}"


def test_a_missing_instructions_field_is_reported_as_required(tmp_path: Path) -> None:
    """A required phase field that is absent is named as required."""
    path = write(tmp_path, "task.yaml", "name: t\nphases:\n  - name: edit\n")

    assert str(load_error(path)) == f"{path}: phases.0.instructions: is required but missing"


@pytest.mark.parametrize(
    ("phases", "expected"),
    [("phases: []\n", "phases: must not be empty"), ("", "phases: is required but missing")],
)
def test_a_task_without_phases_is_refused(tmp_path: Path, phases: str, expected: str) -> None:
    """An empty or absent phase list names the phases field."""
    path = write(tmp_path, "task.yaml", f"name: t\n{phases}")

    error = load_error(path)

    assert error.field == "phases"
    assert str(error) == f"{path}: {expected}"


def test_an_output_phase_that_is_not_last_is_refused(tmp_path: Path) -> None:
    """The output phase must be the last phase; the error says which phase is misplaced."""
    text = (
        "name: t\nphases:\n  - name: report\n    instructions: x\n"
        "    output_schema: {type: object}\n" + MINIMAL_WORK_PHASE
    )
    path = write(tmp_path, "task.yaml", text)

    error = load_error(path)

    assert error.field == "phases"
    assert "phase 1 (report) has an output_schema but is not last" in str(error)
    assert "the output phase must be the last phase" in str(error)


def test_two_output_phases_are_refused(tmp_path: Path) -> None:
    """At most one output phase: the first of two is the one not last."""
    text = "name: t\nphases:\n" + "".join(
        f"  - name: {name}\n    instructions: x\n    output_schema: {{type: object}}\n"
        for name in ("first", "second")
    )

    error = load_error(write(tmp_path, "task.yaml", text))

    assert error.field == "phases"
    assert "phase 1 (first) has an output_schema but is not last" in str(error)


def test_duplicate_phase_names_are_refused(tmp_path: Path) -> None:
    """Two phases with the same name are refused, naming it."""
    path = write(tmp_path, "task.yaml", f"name: t\nphases:\n{MINIMAL_WORK_PHASE * 2}")

    error = load_error(path)

    assert error.field == "phases"
    assert str(error) == f"{path}: phases: phase names must be unique; repeated: edit"


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ("{type: 5}", "not a valid JSON Schema at type: 5 is not valid under any of the given"),
        ("{required: yes}", "not a valid JSON Schema at required: True is not of type 'array'"),
        ("5", "expected a JSON Schema object, a path to a schema file, or a pydantic model"),
    ],
)
def test_an_output_schema_that_is_not_a_schema_is_refused(
    tmp_path: Path, schema: str, expected: str
) -> None:
    """A schema that JSON Schema rejects, or a value that is no schema at all, names the field."""
    text = f"name: t\nphases:\n  - name: report\n    instructions: x\n    output_schema: {schema}\n"

    error = load_error(write(tmp_path, "task.yaml", text))

    assert error.field == "phases.0.output_schema"
    assert expected in str(error)
    assert "also" not in str(error)


def test_a_missing_schema_file_names_the_resolved_path(tmp_path: Path) -> None:
    """A schema path that does not exist is reported with the path it was looked for at."""
    text = "name: t\nphases:\n  - name: report\n    instructions: x\n    output_schema: s.json\n"

    error = load_error(write(tmp_path, "task.yaml", text))

    assert error.field == "phases.0.output_schema"
    assert f"cannot read schema file {tmp_path / 's.json'}" in str(error)


def test_a_broken_schema_file_is_reported(tmp_path: Path) -> None:
    """A schema file that is not valid JSON names that file."""
    write(tmp_path, "s.json", "{not json")
    text = "name: t\nphases:\n  - name: report\n    instructions: x\n    output_schema: s.json\n"

    error = load_error(write(tmp_path, "task.yaml", text))

    assert f"schema file {tmp_path / 's.json'} is not valid JSON" in str(error)


def test_claims_files_without_an_output_schema_is_refused(tmp_path: Path) -> None:
    """claims_files on a work phase names that phase and says an output_schema is needed."""
    path = write(
        tmp_path, "task.yaml", f"name: t\nphases:\n{MINIMAL_WORK_PHASE}    claims_files: files\n"
    )

    error = load_error(path)

    assert error.field == "phases.0"
    assert str(error) == (
        f"{path}: phases.0: claims_files needs an output_schema (it names a field of the JSON)"
    )


def test_several_problems_are_all_listed(tmp_path: Path) -> None:
    """Every problem is reported: the first in the headline, the others on 'also' lines."""
    text = "name: t\nphases:\n  - name: a\n    instructions: x\n    require_tools: 5\n  - name: b\n"

    message = str(load_error(write(tmp_path, "task.yaml", text)))

    assert "phases.0.require_tools: must be a list" in message
    assert "\n  also phases.1.instructions: is required but missing" in message
