"""Files a task or pipeline names stay inside its folder (symlinks resolved), unless the
loading call names a wider files root."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from phasegate.errors import PipelineFileError, TaskFileError
from phasegate.phases.loading import load_task, task_from_mapping
from phasegate.phases.pipeline import load_pipeline, pipeline_from_mapping

SCHEMA = {"type": "object", "required": ["ok"]}


def write(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` (folders made) and return it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def schema_task(path: Path, schema: str) -> Path:
    """A task file at ``path`` whose output_schema is the path ``schema``."""
    phase = {"name": "out", "instructions": "x", "output_schema": schema}
    return write(path, json.dumps({"name": "t", "phases": [phase]}))


def prompt_pipeline(path: Path, prompt_file: str) -> Path:
    """A pipeline file at ``path`` whose one stage reads ``prompt_file``."""
    stage = {"name": "a", "prompt_file": prompt_file, "exit_when": [{"file_exists": "x"}]}
    return write(path, json.dumps({"name": "p", "stages": [stage]}))


def test_a_prompt_file_climbing_out_to_etc_passwd_is_refused(tmp_path: Path) -> None:
    """The prompt never receives a file from outside the pipeline's folder."""
    path = prompt_pipeline(tmp_path / "p" / "pipeline.yaml", "../../../../../../../etc/passwd")

    with pytest.raises(PipelineFileError) as caught:
        load_pipeline(path)

    error = caught.value
    assert error.exit_code == 2
    assert error.field == "stages.0"
    assert error.option == "files_root"
    assert "prompt_file " in error.problem
    assert f"is outside {(tmp_path / 'p').resolve()}, the folder files may be read from" in (
        error.problem
    )
    assert "root:" not in str(error)  # nothing of /etc/passwd is shown


def test_an_output_schema_outside_the_task_folder_is_refused(tmp_path: Path) -> None:
    """``../../outside.schema.json`` is not read."""
    write(tmp_path / "outside.schema.json", json.dumps(SCHEMA))
    path = schema_task(tmp_path / "a" / "b" / "task.json", "../../outside.schema.json")

    with pytest.raises(TaskFileError) as caught:
        load_task(path)

    assert caught.value.field == "phases.0.output_schema"
    assert caught.value.option == "files_root"
    assert "schema file" in caught.value.problem


def test_a_wider_files_root_lets_the_task_read_outside_its_folder(tmp_path: Path) -> None:
    """The option the error names: the same file loads with files_root set."""
    write(tmp_path / "outside.schema.json", json.dumps(SCHEMA))
    path = schema_task(tmp_path / "a" / "b" / "task.json", "../../outside.schema.json")

    task = load_task(path, files_root=tmp_path)

    assert task.phases[0].output_schema == SCHEMA


def test_a_symlink_inside_the_folder_pointing_out_is_refused(tmp_path: Path) -> None:
    """The check looks at the file the link leads to."""
    write(tmp_path / "secret.json", json.dumps(SCHEMA))
    (tmp_path / "task").mkdir()
    (tmp_path / "task" / "s.json").symlink_to(tmp_path / "secret.json")

    with pytest.raises(TaskFileError) as caught:
        load_task(schema_task(tmp_path / "task" / "task.json", "s.json"))

    assert caught.value.option == "files_root"


def test_a_symlink_that_stays_inside_the_folder_is_followed(tmp_path: Path) -> None:
    """Links within the folder are fine."""
    write(tmp_path / "schemas" / "real.json", json.dumps(SCHEMA))
    (tmp_path / "s.json").symlink_to(tmp_path / "schemas" / "real.json")

    task = load_task(schema_task(tmp_path / "task.json", "s.json"))

    assert task.phases[0].output_schema == SCHEMA


def test_a_ref_to_a_file_outside_the_folder_is_refused_even_as_a_file_url(tmp_path: Path) -> None:
    """``file:///...`` elsewhere is outside too."""
    outside = write(tmp_path / "elsewhere" / "s.json", json.dumps(SCHEMA))
    phase = {"name": "o", "instructions": "x", "output_schema": {"$ref": outside.as_uri()}}
    path = write(tmp_path / "task" / "t.json", json.dumps({"name": "t", "phases": [phase]}))

    with pytest.raises(TaskFileError) as caught:
        load_task(path)

    assert caught.value.option == "files_root"
    assert caught.value.problem.startswith(f"$ref {outside.as_uri()!r}: the schema file")


def test_a_stage_task_outside_the_pipeline_folder_is_refused(tmp_path: Path) -> None:
    """A stage's task file is one of the files the pipeline names."""
    write(tmp_path / "shared" / "task.yaml", "name: t\nphases:\n  - {name: a, instructions: x}\n")
    stage = {"name": "a", "task": "../shared/task.yaml"}
    path = write(tmp_path / "p" / "pipeline.json", json.dumps({"name": "p", "stages": [stage]}))

    with pytest.raises(PipelineFileError) as caught:
        load_pipeline(path)
    assert caught.value.field == "stages.0.task"
    assert caught.value.option == "files_root"

    assert load_pipeline(path, files_root=tmp_path).stages[0].task is not None


def test_a_stage_task_may_name_schemas_anywhere_in_the_pipeline_folder(tmp_path: Path) -> None:
    """Inside a pipeline the files root is the pipeline's folder, for its tasks as well."""
    write(tmp_path / "schemas" / "s.json", json.dumps(SCHEMA))
    schema_task(tmp_path / "tasks" / "task.json", "../schemas/s.json")
    stage = {"name": "a", "task": "tasks/task.json"}
    path = write(tmp_path / "pipeline.json", json.dumps({"name": "p", "stages": [stage]}))

    task = load_pipeline(path).stages[0].task

    assert task is not None and task.phases[0].output_schema == SCHEMA


def test_task_data_from_code_may_name_files_anywhere(tmp_path: Path) -> None:
    """Without a source file there is no folder to keep to: the program is trusted."""
    schema = write(tmp_path / "far" / "s.json", json.dumps(SCHEMA))
    data = {
        "name": "t",
        "phases": [{"name": "o", "instructions": "x", "output_schema": str(schema)}],
    }

    assert task_from_mapping(data).phases[0].output_schema == SCHEMA


def test_inline_data_reads_files_relative_to_its_base_and_only_inside_its_root(
    tmp_path: Path,
) -> None:
    """A definition sent as data (the service's inline task or pipeline) names files
    relative to ``base_dir``; ``files_root`` still bounds them."""
    (tmp_path / "prompt.md").write_text("Write x.\n")
    stage = {"name": "a", "prompt_file": "prompt.md", "exit_when": [{"file_exists": "x"}]}
    pipeline = pipeline_from_mapping(
        {"name": "p", "stages": [stage]}, base_dir=tmp_path, files_root=tmp_path
    )
    assert pipeline.stages[0].prompt == "Write x.\n"

    outside = {**stage, "prompt_file": "../elsewhere.md"}
    (tmp_path.parent / "elsewhere.md").write_text("secret\n")
    with pytest.raises(PipelineFileError) as caught:
        pipeline_from_mapping(
            {"name": "p", "stages": [outside]}, base_dir=tmp_path, files_root=tmp_path
        )
    assert caught.value.path is None
    assert caught.value.field == "stages.0"
    assert "outside" in caught.value.problem
