"""Pipeline files (phasegate.phases.pipeline and .checks): stages, checks, inputs and
placeholders, and their errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from phasegate._files.digests import json_digest
from phasegate.errors import PipelineFileError, UsageError
from phasegate.phases.checks import (
    Changed,
    CommandCheck,
    FileExists,
    JsonValid,
    MinLines,
    ToolsUsed,
)
from phasegate.phases.pipeline import DEFAULT_MAX_REVISIONS, DEFAULT_RETRY, Pipeline, load_pipeline
from phasegate.prompts.templates import PROMPTS_DIR_ENV

LANGUAGE = "{id: language, question: Which language, header: Language}"


def test_a_pipeline_without_inputs_loads_with_placeholders_as_literal_text(tmp_path: Path) -> None:
    """Old pipeline files that mention {{ name }} keep loading; the prompt is unchanged."""
    (tmp_path / "prompt.md").write_text("Render {{ name }} with Mustache.\n")
    file = tmp_path / "pipeline.yaml"
    file.write_text(
        "name: p\nstages:\n  - {name: s, prompt_file: prompt.md, exit_when: [{file_exists: a}]}\n"
    )
    assert load_pipeline(file).stages[0].prompt == "Render {{ name }} with Mustache.\n"


def test_a_pipeline_whose_stage_task_declares_inputs_checks_every_placeholder(
    tmp_path: Path,
) -> None:
    """A stage task's input makes the whole pipeline one that declares inputs."""
    file = tmp_path / "pipeline.yaml"
    file.write_text(
        "name: p\nstages:\n"
        "  - {name: s, prompt: 'Render {{ name }}', exit_when: [{file_exists: a}]}\n"
        "  - name: t\n    task:\n      name: t\n"
        f"      phases: [{{name: w, instructions: 'In {{{{ language }}}}'}}]\n"
        f"      inputs: [{LANGUAGE}]\n"
    )
    with pytest.raises(PipelineFileError) as caught:
        load_pipeline(file)
    assert caught.value.field == "stages.0.prompt"
    assert "{{ name }} names no input" in caught.value.problem


def test_a_stage_task_declaring_an_input_unlike_the_pipeline_is_refused(tmp_path: Path) -> None:
    """One id, one declaration, everywhere in the pipeline."""
    file = tmp_path / "pipeline.yaml"
    file.write_text(
        "name: p\nstages:\n  - name: t\n    task:\n      name: t\n"
        "      phases: [{name: w, instructions: 'In {{ language }}'}]\n"
        "      inputs: [{id: language, question: Which one, header: Language}]\n"
        f"inputs: [{LANGUAGE}]\n"
    )
    with pytest.raises(PipelineFileError) as caught:
        load_pipeline(file)
    assert caught.value.field == "stages.0.task.inputs"


FULL_YAML = """\
name: prd-to-code
description: From a PRD to tested code.
max_revisions: 3
stages:
  - name: architect
    prompt: Read prd.md and write architecture.md.
    exit_when:
      - file_exists: a.md
      - command: [python3, -V]
      - changed: "src/**/*.py"
      - tools_used: [Write]
      - json_valid: out.json
  - name: implement
    prompt: Implement the architecture.
    exit_when:
      - file_exists: {path: b.md}
      - min_lines: {path: architecture.md, n: 20}
      - json_valid: {path: report.json, schema: {type: object, required: [ok]}}
      - command: {argv: [python, -m, pytest, -q], exit_code: 1, timeout: 30}
      - changed: {glob: "tests/*.py"}
      - tools_used: {tools: [Edit, MultiEdit]}
    on_fail: {retry: 1, back_to: architect}
"""

TASK_YAML = """\
name: write-notes
completion: marker
phases:
  - name: edit
    instructions: Write notes.md with the Write tool.
    require_tools: [Write]
"""

TASK_DATA: dict[str, Any] = {
    "name": "write-notes",
    "phases": [
        {"name": "edit", "instructions": "Write notes.md.", "require_tools": ["Write"]},
    ],
}


def write(directory: Path, name: str, text: str) -> Path:
    """Write ``text`` to ``directory/name`` (parents created) and return the path."""
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def stage(name: str = "one", **fields: Any) -> dict[str, Any]:
    """A valid stage as data: a prompt and one file_exists check, overridden by ``fields``."""
    return {"name": name, "prompt": "Do it.", "exit_when": [{"file_exists": "a.md"}], **fields}


def pipeline_file(directory: Path, *stages: dict[str, Any], **fields: Any) -> Path:
    """A YAML pipeline file called ``p`` holding ``stages``, in ``directory``."""
    data = {"name": "p", "stages": list(stages), **fields}
    return write(directory, "pipeline.yaml", yaml.safe_dump(data, sort_keys=False))


def load_error(path: Path) -> PipelineFileError:
    """Load ``path`` expecting a PipelineFileError, and return it."""
    with pytest.raises(PipelineFileError) as caught:
        load_pipeline(path)
    return caught.value


def checks_error(tmp_path: Path, *checks: Any) -> PipelineFileError:
    """The error of a pipeline whose second stage has ``checks`` as its exit_when."""
    return load_error(pipeline_file(tmp_path, stage("one"), stage("two", exit_when=list(checks))))


def cli_check(path: Path) -> subprocess.CompletedProcess[str]:
    """``python -m phasegate pipeline check PATH`` with the bundled prompt templates."""
    env = {key: value for key, value in os.environ.items() if key != PROMPTS_DIR_ENV}
    return subprocess.run(
        [sys.executable, "-m", "phasegate", "pipeline", "check", str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


# --- a valid pipeline ------------------------------------------------------------------


def test_a_full_yaml_pipeline_loads_every_check_kind_in_short_and_mapping_form(
    tmp_path: Path,
) -> None:
    """Each short form fills its kind's main field; each mapping form keeps its settings."""
    pipeline = load_pipeline(write(tmp_path, "pipeline.yaml", FULL_YAML))

    architect, implement = pipeline.stages
    assert pipeline.name == "prd-to-code"
    assert pipeline.description == "From a PRD to tested code."
    assert pipeline.max_revisions == 3
    assert architect.exit_when == (
        FileExists(path="a.md"),
        CommandCheck(argv=("python3", "-V")),
        Changed(glob="src/**/*.py"),
        ToolsUsed(tools=("Write",)),
        JsonValid(path="out.json"),
    )
    assert implement.exit_when == (
        FileExists(path="b.md"),
        MinLines(path="architecture.md", n=20),
        JsonValid(path="report.json", schema_={"type": "object", "required": ["ok"]}),
        CommandCheck(argv=("python", "-m", "pytest", "-q"), exit_code=1, timeout=30),
        Changed(glob="tests/*.py"),
        ToolsUsed(tools=("Edit", "MultiEdit")),
    )
    assert implement.on_fail.retry == 1
    assert implement.on_fail.back_to == "architect"


def test_a_command_check_defaults_to_exit_code_zero_within_two_minutes(tmp_path: Path) -> None:
    """The short form of command expects exit code 0 within 120 seconds."""
    pipeline = load_pipeline(write(tmp_path, "pipeline.yaml", FULL_YAML))

    command = pipeline.stages[0].exit_when[1]

    assert isinstance(command, CommandCheck)
    assert (command.exit_code, command.timeout) == (0, 120.0)


def test_a_check_may_also_be_written_with_an_explicit_kind_key(tmp_path: Path) -> None:
    """``{kind: min_lines, path: ..., n: ...}`` is the same check as the one-key form."""
    path = pipeline_file(tmp_path, stage(exit_when=[{"kind": "min_lines", "path": "a.md", "n": 3}]))

    assert load_pipeline(path).stages[0].exit_when == (MinLines(path="a.md", n=3),)


def test_a_json_pipeline_file_loads_like_its_yaml_twin(tmp_path: Path) -> None:
    """A .json file is read as JSON and gives the same pipeline (same digest) as the YAML."""
    data = yaml.safe_load(FULL_YAML)
    from_json = load_pipeline(write(tmp_path, "pipeline.json", json.dumps(data)))

    from_yaml = load_pipeline(write(tmp_path, "pipeline.yaml", FULL_YAML))

    assert from_json == from_yaml
    assert from_json.digest() == from_yaml.digest()


def test_invalid_json_in_a_json_pipeline_names_the_line_and_column(tmp_path: Path) -> None:
    """A syntax error in a .json pipeline is a PipelineFileError with its position."""
    error = load_error(write(tmp_path, "pipeline.json", '{"name": "p",\n  "stages": [}\n'))

    assert error.field is None
    assert "invalid JSON at line 2, column" in error.problem


def test_paths_in_checks_are_normalised(tmp_path: Path) -> None:
    """``./docs//a.md`` is stored as ``docs/a.md``; a backslash becomes a slash."""
    path = pipeline_file(
        tmp_path, stage(exit_when=[{"file_exists": "./docs//a.md"}, {"changed": "src\\*.py"}])
    )

    assert load_pipeline(path).stages[0].exit_when == (
        FileExists(path="docs/a.md"),
        Changed(glob="src/*.py"),
    )


# --- prompts ---------------------------------------------------------------------------


def test_prompt_file_is_read_relative_to_the_pipeline_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stage's prompt is the text of prompt_file, found beside the pipeline, not the cwd."""
    project = tmp_path / "project"
    write(project, "prompts/implement.md", "Implement it, carefully.\n")
    path = pipeline_file(project, stage(prompt=None, prompt_file="prompts/implement.md"))
    monkeypatch.chdir(tmp_path)

    only = load_pipeline(path).stages[0]

    assert only.prompt == "Implement it, carefully.\n"
    assert only.prompt_file == "prompts/implement.md"


def test_an_unreadable_prompt_file_is_refused_naming_the_stage_and_the_file(
    tmp_path: Path,
) -> None:
    """A missing prompt_file is an error at the stage that names prompt_file and its path."""
    error = load_error(
        pipeline_file(tmp_path, stage(), stage("two", prompt=None, prompt_file="missing.md"))
    )

    assert error.path == tmp_path / "pipeline.yaml"
    assert error.field == "stages.1"
    assert "cannot read prompt_file" in error.problem
    assert str(tmp_path / "missing.md") in error.problem
    assert str(error).startswith(f"{tmp_path / 'pipeline.yaml'}: stages.1: ")


def test_prompt_and_prompt_file_together_are_refused(tmp_path: Path) -> None:
    """A stage gives its instructions one way: prompt or prompt_file, not both."""
    write(tmp_path, "p.md", "From the file.")

    error = load_error(pipeline_file(tmp_path, stage(prompt_file="p.md")))

    assert error.field == "stages.0"
    assert error.problem == "give prompt or prompt_file, not both"


def test_a_stage_with_neither_prompt_nor_task_is_refused(tmp_path: Path) -> None:
    """Without a prompt, a prompt_file or a task the agent has nothing to do."""
    error = load_error(pipeline_file(tmp_path, stage(), stage("two", prompt=None)))

    assert error.field == "stages.1"
    assert error.problem == "stage 'two' needs a prompt, a prompt_file or a task"


def test_a_blank_prompt_counts_as_no_prompt(tmp_path: Path) -> None:
    """A prompt of only whitespace is refused like a missing one."""
    error = load_error(pipeline_file(tmp_path, stage(prompt="  \n ")))

    assert "needs a prompt, a prompt_file or a task" in error.problem


def test_a_stage_with_no_checks_and_no_task_is_refused(tmp_path: Path) -> None:
    """A stage must say when it is complete: exit_when checks, or a task."""
    error = load_error(pipeline_file(tmp_path, stage(exit_when=[])))

    assert error.field == "stages.0"
    assert error.problem == "stage 'one' has nothing to check: add exit_when checks (or a task)"


# --- tasks -----------------------------------------------------------------------------


def test_a_task_path_is_loaded_relative_to_the_pipeline_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``task: tasks/notes.yaml`` reads the task file beside the pipeline; no checks needed."""
    project = tmp_path / "project"
    write(project, "tasks/notes.yaml", TASK_YAML)
    path = pipeline_file(project, {"name": "notes", "task": "tasks/notes.yaml"})
    monkeypatch.chdir(tmp_path)

    only = load_pipeline(path).stages[0]

    assert only.task is not None
    assert only.task.name == "write-notes"
    assert [phase.name for phase in only.task.phases] == ["edit"]
    assert only.task.phases[0].require_tools == ("Write",)
    assert only.prompt is None
    assert only.exit_when == ()


def test_an_inline_task_is_accepted_with_a_prompt_and_checks(tmp_path: Path) -> None:
    """A task written inline in the stage is built like a task file."""
    path = pipeline_file(tmp_path, stage(task=TASK_DATA))

    only = load_pipeline(path).stages[0]

    assert only.task is not None
    assert only.task.name == "write-notes"
    assert only.task.phases[0].instructions == "Write notes.md."
    assert only.exit_when == (FileExists(path="a.md"),)


def test_a_missing_task_file_is_refused_naming_the_task_field_and_the_file(
    tmp_path: Path,
) -> None:
    """An unreadable task path is an error at stages.N.task that says which file."""
    error = load_error(pipeline_file(tmp_path, {"name": "notes", "task": "nope.yaml"}))

    assert error.field == "stages.0.task"
    assert error.problem == f"task {tmp_path / 'nope.yaml'}: file not found"


def test_an_invalid_inline_task_is_refused_naming_the_task_field(tmp_path: Path) -> None:
    """The task's own error (its field and problem) is carried inside the pipeline error."""
    error = load_error(pipeline_file(tmp_path, {"name": "n", "task": {"name": "t", "phases": []}}))

    assert error.field == "stages.0.task"
    assert "phases: must not be empty" in error.problem


STRUCTURED_OUTPUT_PHASE: dict[str, Any] = {
    "name": "summary",
    "instructions": "Report.",
    "output_schema": {"type": "object"},
    "structured_output": True,
}


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        (
            {**TASK_DATA, "completion": "tool"},
            ["completes phases by tool", "set completion: marker"],
        ),
        (
            {**TASK_DATA, "phases": [*TASK_DATA["phases"], STRUCTURED_OUTPUT_PHASE]},
            ["asks for structured_output", "remove it"],
        ),
        ({**TASK_DATA, "on_reject": "revert"}, ["on_reject: revert"]),
    ],
    ids=["completion-tool", "structured-output", "on-reject-revert"],
)
def test_a_task_a_pipeline_cannot_run_is_refused_with_advice(
    tmp_path: Path, task: dict[str, Any], expected: list[str]
) -> None:
    """Completion by tool, structured_output (it would end the pipeline's session) and
    ``on_reject: revert`` are refused at the stage's task, saying what to change."""
    error = load_error(pipeline_file(tmp_path, {"name": "n", "task": task}))

    assert error.field == "stages.0.task"
    for text in expected:
        assert text in error.problem


def test_a_task_that_completes_either_way_becomes_marker_only(tmp_path: Path) -> None:
    """``completion: either`` (the default) is narrowed to ``marker`` in a pipeline."""
    task = {**TASK_DATA, "completion": "either"}

    only = load_pipeline(pipeline_file(tmp_path, {"name": "n", "task": task})).stages[0]

    assert only.task is not None
    assert only.task.completion == "marker"


# --- bad checks ------------------------------------------------------------------------


def test_an_unknown_check_kind_is_refused_naming_the_check(tmp_path: Path) -> None:
    """The error points at stages.1.exit_when.1 and lists the known kinds."""
    error = checks_error(tmp_path, {"file_exists": "a.md"}, {"exists": "b.md"})

    assert error.field == "stages.1.exit_when.1"
    assert error.problem.startswith("unknown check 'exists'; expected one of: file_exists,")


def test_a_check_with_two_keys_is_refused_naming_the_field(tmp_path: Path) -> None:
    """A check is one key, its kind: two keys is an error that lists both."""
    error = checks_error(tmp_path, {"file_exists": "a.md", "changed": "src/*.py"})

    assert error.field == "stages.1.exit_when.0"
    assert "exactly one key" in error.problem
    assert "found keys: file_exists, changed" in error.problem


def test_min_lines_has_no_short_form(tmp_path: Path) -> None:
    """``min_lines: 5`` is refused: the check needs its path and n as a mapping."""
    error = checks_error(tmp_path, {"min_lines": 5})

    assert error.field == "stages.1.exit_when.0"
    assert error.problem == "check 'min_lines' needs a mapping of settings"


def test_a_setting_of_the_wrong_type_is_refused_naming_the_setting(tmp_path: Path) -> None:
    """``n: many`` is an error at stages.1.exit_when.0.min_lines.n."""
    error = checks_error(tmp_path, {"min_lines": {"path": "a.md", "n": "many"}})

    assert error.field == "stages.1.exit_when.0.min_lines.n"
    assert error.problem == "must be a whole number, not the text 'many'"


@pytest.mark.parametrize(
    ("fields", "checks", "field"),
    [
        ({"max_revisions": True}, [{"file_exists": "a.md"}], "max_revisions"),
        ({}, [{"min_lines": {"path": "a.md", "n": True}}], "stages.1.exit_when.0.min_lines.n"),
        (
            {},
            [{"command": {"argv": ["true"], "exit_code": False}}],
            "stages.1.exit_when.0.command.exit_code",
        ),
        (
            {},
            [{"command": {"argv": ["true"], "timeout": True}}],
            "stages.1.exit_when.0.command.timeout",
        ),
    ],
)
def test_true_or_false_where_a_number_belongs_is_refused_not_taken_as_one_or_zero(
    tmp_path: Path, fields: dict[str, Any], checks: list[Any], field: str
) -> None:
    """``bool`` is an ``int``: a lax field would take ``n: true`` as 1."""
    error = load_error(
        pipeline_file(tmp_path, stage("one"), stage("two", exit_when=checks), **fields)
    )

    assert error.field == field
    assert "number, not " in error.problem and "(true or false)" in error.problem


def test_a_stage_retry_of_true_is_refused_naming_it(tmp_path: Path) -> None:
    error = load_error(pipeline_file(tmp_path, stage("one", on_fail={"retry": True})))

    assert error.field == "stages.0.on_fail.retry"
    assert error.problem == "must be a whole number, not true (true or false)"


def test_an_unknown_setting_of_a_check_is_refused_listing_the_known_ones(tmp_path: Path) -> None:
    """An extra key inside a check's mapping is named, with what the check accepts."""
    error = checks_error(tmp_path, {"file_exists": {"path": "a.md", "size": 3}})

    assert error.field == "stages.1.exit_when.0.file_exists.size"
    assert error.problem.startswith("is not a known key")


def test_a_kind_inside_a_checks_settings_cannot_change_its_kind(tmp_path: Path) -> None:
    """``file_exists: {kind: min_lines, ...}`` is refused rather than loaded as min_lines."""
    check = {"file_exists": {"kind": "min_lines", "path": "a.md", "n": 2}}

    error = load_error(pipeline_file(tmp_path, stage(exit_when=[check])))

    assert error.field == "stages.0.exit_when.0"
    assert "cannot set kind: 'min_lines'" in error.problem


def test_an_empty_command_is_refused(tmp_path: Path) -> None:
    """``command: []`` has no program to run."""
    error = checks_error(tmp_path, {"command": []})

    assert error.field == "stages.1.exit_when.0.command.argv"
    assert error.problem == "must not be empty"


@pytest.mark.parametrize(
    ("check", "field", "value"),
    [
        ({"file_exists": "/etc/passwd"}, "file_exists.path", "/etc/passwd"),
        ({"min_lines": {"path": "../notes.md", "n": 2}}, "min_lines.path", "../notes.md"),
        ({"changed": "src/../../elsewhere/*.py"}, "changed.glob", "src/../../elsewhere/*.py"),
        ({"json_valid": ".."}, "json_valid.path", ".."),
        ({"file_exists": "C:\\notes.md"}, "file_exists.path", "C:\\notes.md"),
        ({"changed": "d:/elsewhere/*.py"}, "changed.glob", "d:/elsewhere/*.py"),
    ],
)
def test_a_path_that_leaves_the_work_directory_is_refused(
    tmp_path: Path, check: dict[str, Any], field: str, value: str
) -> None:
    """Absolute paths and paths climbing out with '..' are errors naming the path field."""
    error = checks_error(tmp_path, check)

    assert error.field == f"stages.1.exit_when.0.{field}"
    assert error.problem == (
        f"{value!r} leaves the work directory; write a path relative to it, without '..'"
    )


def test_a_name_that_only_starts_with_two_dots_stays_inside(tmp_path: Path) -> None:
    """``..notes.md`` is a file name, not a step up: it is accepted."""
    path = pipeline_file(tmp_path, stage(exit_when=[{"file_exists": "..notes.md"}]))

    assert load_pipeline(path).stages[0].exit_when == (FileExists(path="..notes.md"),)


def test_a_json_valid_schema_path_is_read_relative_to_the_pipeline_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``schema: schemas/report.json`` loads that file's JSON Schema into the check."""
    project = tmp_path / "project"
    schema = {"type": "object", "required": ["ok"], "properties": {"ok": {"type": "boolean"}}}
    write(project, "schemas/report.json", json.dumps(schema))
    check = {"json_valid": {"path": "report.json", "schema": "schemas/report.json"}}
    path = pipeline_file(project, stage(exit_when=[check]))
    monkeypatch.chdir(tmp_path)

    (loaded,) = load_pipeline(path).stages[0].exit_when

    assert loaded == JsonValid(path="report.json", schema_=schema)


def test_a_missing_schema_file_is_refused_naming_the_schema_field(tmp_path: Path) -> None:
    """An unreadable schema path is an error at ...json_valid.schema naming the file."""
    error = checks_error(tmp_path, {"json_valid": {"path": "r.json", "schema": "none.json"}})

    assert error.field == "stages.1.exit_when.0.json_valid.schema"
    assert f"cannot read schema file {tmp_path / 'none.json'}" in error.problem


@pytest.mark.parametrize(
    "schema", [{"type": "nope"}, "schemas/bad.json"], ids=["inline", "schema-file"]
)
def test_an_invalid_json_schema_is_refused_naming_the_schema_field(
    tmp_path: Path, schema: object
) -> None:
    """A schema that is not a JSON Schema (inline or in a file) is refused where it is given."""
    write(tmp_path, "schemas/bad.json", json.dumps({"type": "nope"}))

    error = checks_error(tmp_path, {"json_valid": {"path": "r.json", "schema": schema}})

    assert error.field == "stages.1.exit_when.0.json_valid.schema"
    assert error.problem.startswith("not a valid JSON Schema at type:")


# --- stages together -------------------------------------------------------------------


def test_duplicate_stage_names_are_refused(tmp_path: Path) -> None:
    """Stage names are unique: the repeated one is named."""
    error = load_error(pipeline_file(tmp_path, stage("a"), stage("b"), stage("a")))

    assert error.field == "stages"
    assert error.problem == "stage names must be unique; repeated: a"


def test_back_to_an_unknown_stage_is_refused_listing_the_stages(tmp_path: Path) -> None:
    """on_fail.back_to must name a stage of the pipeline."""
    error = load_error(
        pipeline_file(tmp_path, stage("a"), stage("b", on_fail={"back_to": "archtect"}))
    )

    assert error.field == "stages"
    assert "on_fail.back_to names 'archtect', which is not a stage; stages: a, b" in error.problem


@pytest.mark.parametrize("target", ["a", "b"], ids=["itself", "a-later-stage"])
def test_back_to_the_same_or_a_later_stage_is_refused(tmp_path: Path, target: str) -> None:
    """Only an earlier stage can be revised; a stage retries itself with on_fail.retry."""
    error = load_error(pipeline_file(tmp_path, stage("a", on_fail={"back_to": target}), stage("b")))

    assert error.field == "stages"
    assert f"stage 'a': on_fail.back_to must name an earlier stage, not {target!r}" in (
        error.problem
    )


def test_a_pipeline_with_no_stages_is_refused(tmp_path: Path) -> None:
    """An empty stages list is an error at stages."""
    error = load_error(pipeline_file(tmp_path))

    assert error.field == "stages"
    assert error.problem == "must not be empty"


def test_on_fail_and_max_revisions_have_their_defaults(tmp_path: Path) -> None:
    """Without on_fail a stage retries twice and sends nowhere; two revisions per run."""
    pipeline = load_pipeline(pipeline_file(tmp_path, stage()))

    assert pipeline.stages[0].on_fail.retry == DEFAULT_RETRY == 2
    assert pipeline.stages[0].on_fail.back_to is None
    assert pipeline.max_revisions == DEFAULT_MAX_REVISIONS == 2


def test_a_pipeline_file_error_is_a_usage_error(tmp_path: Path) -> None:
    """A bad pipeline file is the user's input to fix: exit code 2."""
    error = load_error(tmp_path / "missing.yaml")

    assert isinstance(error, UsageError)
    assert error.exit_code == 2
    assert error.problem == "file not found"


def test_index_of_gives_the_zero_based_position_of_a_stage(tmp_path: Path) -> None:
    """index_of finds each stage by name."""
    pipeline = load_pipeline(write(tmp_path, "pipeline.yaml", FULL_YAML))

    assert pipeline.index_of("architect") == 0
    assert pipeline.index_of("implement") == 1


# --- digest ----------------------------------------------------------------------------


def full_pipeline(**changes: Any) -> Pipeline:
    """FULL_YAML as a Pipeline, with top-level keys of stage 1 (``implement``) replaced."""
    data = yaml.safe_load(FULL_YAML)
    data["stages"][1].update(changes)
    return Pipeline.model_validate(data)


def test_the_digest_is_stable_for_the_same_content(tmp_path: Path) -> None:
    """Two loads of the same definition (YAML text or data) have the same digest: the
    SHA-256 of its canonical JSON, the fingerprint a task has too."""
    first = load_pipeline(write(tmp_path, "one.yaml", FULL_YAML))
    second = load_pipeline(write(tmp_path / "elsewhere", "two.yaml", FULL_YAML))

    assert first.digest() == second.digest() == full_pipeline().digest()
    assert first.digest() == json_digest(first.model_dump(mode="json", by_alias=True))
    assert re.fullmatch(r"[0-9a-f]{64}", first.digest())


def test_the_digest_changes_when_a_prompt_changes() -> None:
    """Editing one stage's prompt makes it another pipeline for a resume."""
    assert full_pipeline(prompt="Implement it all.").digest() != full_pipeline().digest()


def test_the_digest_changes_when_a_check_changes() -> None:
    """Raising one min_lines threshold changes the digest."""
    checks = yaml.safe_load(FULL_YAML)["stages"][1]["exit_when"]
    checks[1] = {"min_lines": {"path": "architecture.md", "n": 21}}

    assert full_pipeline(exit_when=checks).digest() != full_pipeline().digest()


def test_the_digest_changes_when_a_prompt_file_changes(tmp_path: Path) -> None:
    """The prompt file's text is part of the definition, not just its name."""
    write(tmp_path, "p.md", "First version.")
    path = pipeline_file(tmp_path, stage(prompt=None, prompt_file="p.md"))
    before = load_pipeline(path).digest()

    write(tmp_path, "p.md", "Second version.")

    assert load_pipeline(path).digest() != before


# --- the CLI ---------------------------------------------------------------------------


def test_pipeline_check_prints_each_stage_prompt_and_exits_zero(tmp_path: Path) -> None:
    """Every stage prompt starts with ``Stage N of M: NAME`` and lists its checks."""
    done = cli_check(write(tmp_path, "pipeline.yaml", FULL_YAML))

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "Stage 1 of 2: architect" in lines
    assert "Stage 2 of 2: implement" in lines
    assert lines.index("Stage 1 of 2: architect") < lines.index("Stage 2 of 2: implement")
    assert lines[0] == "Stage 1 of 2: architect"
    assert "- a.md exists" in lines
    assert "- architecture.md has at least 20 lines" in lines
    assert "Read prd.md and write architecture.md." in lines
    assert "valid pipeline 'prd-to-code' with 2 stage(s)" in done.stderr


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("name: p\nstages: [\n", "invalid YAML"),
        (
            "name: p\nstages:\n  - name: a\n    prompt: x\n    exit_when: [{exists: a}]\n",
            ("stages.0.exit_when.0: unknown check 'exists'"),
        ),
    ],
    ids=["syntax", "unknown-check"],
)
def test_pipeline_check_on_a_bad_file_exits_2_with_a_message_not_a_traceback(
    tmp_path: Path, text: str, expected: str
) -> None:
    """The error names the file and what is wrong, on stderr; nothing on stdout."""
    path = write(tmp_path, "pipeline.yaml", text)

    done = cli_check(path)

    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith(f"phasegate: error: {path}: ")
    assert expected in done.stderr
    assert done.stdout == ""


def _stages(**first: Any) -> list[dict[str, Any]]:
    return [{"name": "code", "prompt": "Write it.",
             "exit_when": [{"tools_used": ["Write", "Edit"]}], **first}]  # fmt: skip


def test_a_pipelines_toolset_is_offered_in_every_session_and_kept_out_of_old_digests() -> None:
    """Set, it is the pipeline's; unset, the dump has no such key (old digests match)."""
    narrow = Pipeline.model_validate({"name": "p", "stages": _stages(), "toolset": ["Write"]})
    assert narrow.toolset == ("Write",)
    assert "toolset" not in Pipeline.model_validate({"name": "p", "stages": _stages()}).model_dump()


@pytest.mark.parametrize(
    ("stage", "toolset", "says"),
    [
        ({}, ["Read"], "stage 'code' requires Write or Edit, which the toolset does not offer"),
        (
            {"task": {"name": "t", "toolset": ["Read"],
                      "phases": [{"name": "a", "instructions": "Look."}]}},
            ["Read", "Write"],
            "its task names a toolset",
        ),
    ],
)  # fmt: skip
def test_a_pipeline_toolset_that_cannot_do_a_stages_work_is_refused(
    stage: dict[str, Any], toolset: list[str], says: str
) -> None:
    """A stage's tools_used check (or its task's require_tools) must be offered; a stage task
    cannot narrow the tools of sessions the stages share."""
    with pytest.raises(ValueError, match=re.escape(says)):
        Pipeline.model_validate({"name": "p", "stages": _stages(**stage), "toolset": toolset})
