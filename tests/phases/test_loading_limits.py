"""Task and pipeline files past phasegate's limits: refused with a sentence, quickly, in
bounded memory (size, nesting, YAML aliases, duplicate keys, the wrong kind of file)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers.fuzz import bounded_memory

from phasegate._files import MAX_DEPTH, MAX_FILE_BYTES, MAX_NODES
from phasegate.errors import PipelineFileError, TaskFileError, _FileFieldError
from phasegate.phases.loading import load_task
from phasegate.phases.pipeline import load_pipeline

WORK_PHASE = "  - name: edit\n    instructions: Fix it.\n"
OUTPUT_PHASE = "  - name: out\n    instructions: Report.\n    output_schema:\n"


def alias_bomb(indent: str, levels: int = 9) -> str:
    """YAML lines, at ``indent``, whose last key expands to 10**levels values."""
    lines = [f"{indent}x0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    lines += [
        f"{indent}x{n}: &a{n} [" + ", ".join([f"*a{n - 1}"] * 10) + "]" for n in range(1, levels)
    ]
    return "\n".join(lines) + "\n"


def write(directory: Path, name: str, text: str) -> Path:
    """Write ``text`` to ``directory/name`` and return the path."""
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def refused(load: object, path: Path, error: type[_FileFieldError]) -> _FileFieldError:
    """The error ``load(path)`` raises, within the fuzz tests' memory bound."""
    with pytest.raises(error) as caught, bounded_memory():
        load(path)  # type: ignore[operator]
    assert caught.value.exit_code == 2
    return caught.value


def test_an_alias_bomb_in_an_inline_schema_is_refused_before_it_expands(tmp_path: Path) -> None:
    """Nine levels of ten aliases each: a billion values, refused at the node budget."""
    path = write(tmp_path, "task.yaml", f"name: t\nphases:\n{OUTPUT_PHASE}{alias_bomb(' ' * 6)}")

    error = refused(load_task, path, TaskFileError)

    assert error.path == path
    assert f"holds more than {MAX_NODES} values" in error.problem
    assert "aliases expanded" in error.problem


def test_an_alias_bomb_in_a_json_valid_schema_is_refused(tmp_path: Path) -> None:
    """The pipeline case that hung for minutes: the same refusal."""
    text = (
        "name: p\nstages:\n  - name: a\n    prompt: x\n    exit_when:\n"
        "      - json_valid:\n          path: o.json\n          schema:\n"
    ) + alias_bomb(" " * 12)
    error = refused(load_pipeline, write(tmp_path, "p.yaml", text), PipelineFileError)

    assert f"holds more than {MAX_NODES} values" in error.problem


def test_an_alias_bomb_in_a_schema_file_names_the_schema_file(tmp_path: Path) -> None:
    """A schema file is parsed with the same limits; the error names it and the field."""
    write(tmp_path, "s.yaml", "type: object\n" + alias_bomb(""))
    path = write(tmp_path, "task.yaml", f"name: t\nphases:\n{OUTPUT_PHASE[:-1]} s.yaml\n")

    error = refused(load_task, path, TaskFileError)

    assert error.field == "phases.0.output_schema"
    assert f"schema file {tmp_path / 's.yaml'} is not valid YAML: holds more than" in error.problem


def test_a_few_shared_aliases_within_the_budget_still_load(tmp_path: Path) -> None:
    """Aliases are fine in moderation: a shared instruction text, say."""
    text = (
        "name: t\nphases:\n  - name: a\n    instructions: &same Do the work.\n"
        "  - name: b\n    instructions: *same\n"
    )
    task = load_task(write(tmp_path, "task.yaml", text))
    assert [p.instructions for p in task.phases] == ["Do the work.", "Do the work."]


def test_an_alias_inside_its_own_value_is_refused(tmp_path: Path) -> None:
    """``&a [*a]`` never ends; it is named with its line."""
    error = refused(
        load_task, write(tmp_path, "t.yaml", "name: t\nphases: &a [*a]\n"), TaskFileError
    )
    assert "an alias refers to the value that holds it" in error.problem
    assert "line 2" in error.problem


@pytest.mark.parametrize("name", ["task.yaml", "task.json"])
def test_nesting_a_hundred_thousand_deep_is_refused_without_a_recursion_error(
    tmp_path: Path, name: str
) -> None:
    """YAML and JSON alike: a sentence naming the limit."""
    deep = "[" * 100_000 + "]" * 100_000
    text = f"name: t\nphases: {deep}\n" if name.endswith("yaml") else f'{{"phases": {deep}}}'

    error = refused(load_task, write(tmp_path, name, text), TaskFileError)

    assert f"values nest more than {MAX_DEPTH} levels deep" in error.problem


def test_a_deeply_nested_pipeline_is_refused(tmp_path: Path) -> None:
    """The pipeline loader reads through the same parser."""
    text = "name: p\nstages: " + "[" * 100_000 + "]" * 100_000 + "\n"
    error = refused(load_pipeline, write(tmp_path, "p.yaml", text), PipelineFileError)
    assert "levels deep" in error.problem


def test_a_file_past_the_size_limit_is_refused_naming_the_limit(tmp_path: Path) -> None:
    """Read no further than the limit, and say what it is."""
    path = write(tmp_path, "task.yaml", "name: t\n#" + "x" * MAX_FILE_BYTES + "\n")

    error = refused(load_task, path, TaskFileError)

    assert error.problem.startswith("is larger than 2 MiB, the most phasegate reads")


def test_a_number_past_pythons_digit_limit_is_a_file_error(tmp_path: Path) -> None:
    """A 5000-digit integer is refused as bad input, in JSON and in YAML."""
    big = "9" * 5000
    json_error = refused(load_task, write(tmp_path, "t.json", f'{{"name": {big}}}'), TaskFileError)
    yaml_error = refused(load_task, write(tmp_path, "t.yaml", f"name: {big}\n"), TaskFileError)

    assert json_error.problem.startswith("invalid JSON: ")
    assert yaml_error.problem.startswith("invalid YAML: ")


def test_a_duplicate_key_in_yaml_is_refused_with_both_lines(tmp_path: Path) -> None:
    """Last-one-wins would silently drop the first phase list."""
    text = f"name: t\nphases:\n{WORK_PHASE}phases:\n{WORK_PHASE}"

    error = refused(load_task, write(tmp_path, "task.yaml", text), TaskFileError)

    assert error.problem == (
        "the key 'phases' appears twice in one mapping (line 2 and line 5); keep only one of them"
    )


def test_a_duplicate_key_in_a_nested_yaml_mapping_is_refused(tmp_path: Path) -> None:
    """Inside a phase too."""
    text = "name: t\nphases:\n  - name: a\n    instructions: x\n    instructions: y\n"
    error = refused(load_task, write(tmp_path, "task.yaml", text), TaskFileError)
    assert "the key 'instructions' appears twice in one mapping (line 4 and line 5)" in str(error)


def test_a_yaml_merge_key_overridden_by_its_mapping_is_no_duplicate(tmp_path: Path) -> None:
    """``<<: *base`` then a key of its own is YAML's way to override, not a duplicate."""
    text = (
        "name: t\nphases:\n  - &base {name: a, instructions: x, marker: one}\n"
        "  - <<: *base\n    name: b\n    marker: two\n"
    )
    task = load_task(write(tmp_path, "task.yaml", text))
    assert [(p.name, p.marker) for p in task.phases] == [("a", "one"), ("b", "two")]


def test_a_duplicate_key_in_json_is_refused(tmp_path: Path) -> None:
    """JSON objects too, in a pipeline file."""
    path = write(tmp_path, "p.json", '{"name": "a", "stages": [], "name": "b"}')
    error = refused(load_pipeline, path, PipelineFileError)
    assert error.problem == "the key 'name' appears twice in one object; keep only one of them"


def test_a_stage_task_that_is_a_pipeline_file_says_so(tmp_path: Path) -> None:
    """Not 'stages: is not a known key': the file is a pipeline, not a task."""
    write(tmp_path, "inner.yaml", "name: inner\nstages:\n  - {name: s, prompt: x}\n")
    outer = write(tmp_path, "outer.yaml", "name: outer\nstages:\n  - {name: a, task: inner.yaml}\n")

    error = refused(load_pipeline, outer, PipelineFileError)

    assert error.field == "stages.0.task"
    assert "is a pipeline file (it has stages:), not a task file" in error.problem
    assert "not a known key" not in error.problem


def test_a_task_file_given_as_a_pipeline_says_so(tmp_path: Path) -> None:
    """The other way round, the same courtesy."""
    path = write(tmp_path, "task.yaml", f"name: t\nphases:\n{WORK_PHASE}")
    error = refused(load_pipeline, path, PipelineFileError)
    assert error.problem.startswith("is a task file (it has phases:), not a pipeline file")
