"""$ref in output schemas and json_valid schemas: followed at load time, from local files
inside the task's folder only, into one schema that validates on its own."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.http import counting_server

from phasegate._files import MAX_NODES
from phasegate.errors import PipelineFileError, TaskFileError
from phasegate.phases.loading import load_task
from phasegate.phases.pipeline import load_pipeline
from phasegate.phases.schemas import schema_problem, schema_validator

ID_SCHEMA = {"type": "string", "pattern": "^[a-z]+$"}


def task_with_schema(directory: Path, schema: object, name: str = "task.yaml") -> Path:
    """A one-phase task file in ``directory`` whose output schema is ``schema``."""
    data = {"name": "t", "phases": [{"name": "out", "instructions": "x", "output_schema": schema}]}
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if name.endswith(".json") else _yaml(data))
    return path


def _yaml(data: dict[str, Any]) -> str:
    return json.dumps(data)  # JSON is YAML: the YAML loader reads it as such


def write_json(path: Path, value: object) -> Path:
    """Write ``value`` as JSON to ``path`` (folders made)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))
    return path


def loaded_schema(path: Path) -> dict[str, Any]:
    """The output schema of the task file at ``path``."""
    schema = load_task(path).phases[0].output_schema
    assert schema is not None
    return schema


def errors_of(schema: dict[str, Any] | None, value: Any) -> list[str]:
    """The messages validating ``value`` gives."""
    assert schema is not None
    return [error.message for error in schema_validator(schema).iter_errors(value)]


def load_error(path: Path) -> TaskFileError:
    """The TaskFileError loading ``path`` raises."""
    with pytest.raises(TaskFileError) as caught:
        load_task(path)
    return caught.value


def test_a_ref_to_a_file_beside_the_task_is_embedded_and_validates_without_it(
    tmp_path: Path,
) -> None:
    """b.json is read at load time; deleting it afterwards changes nothing."""
    referenced = write_json(tmp_path / "b.json", {"type": "object", "required": ["id"]})
    schema = loaded_schema(task_with_schema(tmp_path, {"$ref": "b.json"}))
    referenced.unlink()

    assert errors_of(schema, {"id": 1}) == []
    assert errors_of(schema, {}) == ["'id' is a required property"]


def test_refs_chain_through_files_relative_to_each_file(tmp_path: Path) -> None:
    """A file in a subfolder refers on with paths relative to itself, pointers included."""
    write_json(tmp_path / "common" / "ids.json", {"$defs": {"Id": ID_SCHEMA}})
    write_json(
        tmp_path / "schemas" / "out.json",
        {
            "type": "object",
            "properties": {"id": {"$ref": "../common/ids.json#/$defs/Id"}},
            "required": ["id"],
        },
    )
    schema = loaded_schema(task_with_schema(tmp_path, "schemas/out.json"))

    assert errors_of(schema, {"id": "abc"}) == []
    assert errors_of(schema, {"id": "ABC"}) == ["'ABC' does not match '^[a-z]+$'"]


def test_a_loaded_schema_names_no_folder_of_the_machine(tmp_path: Path) -> None:
    """Embedded files are named by their place in the task's folder, so the prompt and a
    pipeline's digest do not depend on where the project lies."""
    write_json(tmp_path / "b.json", ID_SCHEMA)
    schema = loaded_schema(task_with_schema(tmp_path, {"$ref": "b.json"}))

    assert str(tmp_path) not in json.dumps(schema)
    assert schema["$ref"] == "file:///b.json"
    assert schema["$defs"]["b.json"] == {"$id": "file:///b.json", **ID_SCHEMA}


def test_a_schema_with_only_internal_refs_is_kept_as_written(tmp_path: Path) -> None:
    """Nothing is added to a schema that needs no other file."""
    written = {"$defs": {"Id": ID_SCHEMA}, "properties": {"id": {"$ref": "#/$defs/Id"}}}
    assert loaded_schema(task_with_schema(tmp_path, written)) == written


def test_a_draft_07_schema_embeds_its_files_under_definitions(tmp_path: Path) -> None:
    """Before 2019-09 $defs is no keyword: embedded files go where that dialect looks."""
    write_json(tmp_path / "b.json", {"$ref": "#/definitions/Id", "definitions": {"Id": ID_SCHEMA}})
    draft7 = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "properties": {"id": {"$ref": "b.json"}},
    }
    schema = loaded_schema(task_with_schema(tmp_path, draft7))

    assert "b.json" in schema["definitions"]
    assert errors_of(schema, {"id": "abc"}) == []
    assert errors_of(schema, {"id": 5}) == ["5 is not of type 'string'"]


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("missing.schema.json", "$ref 'missing.schema.json' cannot be followed: cannot read"),
        ("#/$defs/nope", "$ref '#/$defs/nope' points to nothing: /$defs/nope is not in it"),
        ("b.json#/$defs/nope", "$ref 'b.json#/$defs/nope' points to nothing"),
        ("#/type/0", "$ref '#/type/0' points to a str, not to a schema"),
        ("#nowhere", "$ref '#nowhere' names an anchor that does not exist: nowhere"),
    ],
)
def test_a_ref_that_cannot_be_followed_fails_the_load_naming_file_field_and_ref(
    tmp_path: Path, ref: str, expected: str
) -> None:
    """Exit 2 at check time, not a traceback at run time."""
    write_json(tmp_path / "b.json", {"type": "object"})
    path = task_with_schema(tmp_path, {"type": "object", "properties": {"a": {"$ref": ref}}})

    error = load_error(path)

    assert error.exit_code == 2
    assert error.path == path
    assert error.field == "phases.0.output_schema"
    assert expected in error.problem


def test_a_remote_ref_is_refused_without_any_request(tmp_path: Path) -> None:
    """An http URL is never fetched: the server sees no request at all."""
    with counting_server() as server:
        path = task_with_schema(tmp_path, {"$ref": f"{server.url}/s.json"})
        error = load_error(path)
        urllib.request.urlopen(f"{server.url}/control").read()  # the server does count

    assert server.requests == ["/control"]
    assert error.field == "phases.0.output_schema"
    assert f"$ref '{server.url}/s.json' is not a local file" in error.problem
    assert "never fetches schemas over the network" in error.problem


def test_a_relative_ref_under_a_remote_id_is_refused_without_any_request(
    tmp_path: Path,
) -> None:
    """A schema whose $id is a URL makes its relative refs URLs: refused, not fetched."""
    with counting_server() as server:
        schema = {"$id": f"{server.url}/root.json", "$ref": "other.json"}
        error = load_error(task_with_schema(tmp_path, schema))

    assert server.requests == []
    assert f"it resolves to {server.url}/other.json" in error.problem


def test_a_json_valid_schema_with_a_remote_ref_is_refused_without_any_request(
    tmp_path: Path,
) -> None:
    """Pipelines' json_valid schemas follow the same rule."""
    with counting_server() as server:
        check = {"json_valid": {"path": "o.json", "schema": {"$ref": f"{server.url}/s.json"}}}
        stage = {"name": "a", "prompt": "x", "exit_when": [check]}
        path = write_json(tmp_path / "p.json", {"name": "p", "stages": [stage]})
        with pytest.raises(PipelineFileError) as caught:
            load_pipeline(path)

    assert server.requests == []
    assert caught.value.field == "stages.0.exit_when.0.json_valid.schema"
    assert "is not a local file" in caught.value.problem


def test_a_json_valid_schema_file_refers_relative_to_itself(tmp_path: Path) -> None:
    """A json_valid schema given as a path follows its refs from its own folder."""
    write_json(tmp_path / "schemas" / "ids.json", ID_SCHEMA)
    write_json(tmp_path / "schemas" / "out.json", {"properties": {"id": {"$ref": "ids.json"}}})
    check = {"json_valid": {"path": "o.json", "schema": "schemas/out.json"}}
    stage = {"name": "a", "prompt": "x", "exit_when": [check]}
    pipeline = load_pipeline(write_json(tmp_path / "p.json", {"name": "p", "stages": [stage]}))

    schema = pipeline.stages[0].exit_when[0].schema_  # type: ignore[union-attr]
    assert errors_of(schema, {"id": "ABC"}) == ["'ABC' does not match '^[a-z]+$'"]


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#"},
        {
            "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}},
            "$ref": "#/$defs/a",
        },
        {"properties": {"x": {"not": {"$ref": "#/properties/x"}}}},
    ],
)
def test_a_ref_loop_that_never_looks_inside_the_value_is_refused(
    tmp_path: Path, schema: dict[str, Any]
) -> None:
    """Such a schema would recurse forever on any value: refused at load time."""
    error = load_error(task_with_schema(tmp_path, schema))

    assert error.field == "phases.0.output_schema"
    assert "leads back to where it started without looking inside the value" in error.problem


def test_a_recursive_schema_that_descends_into_the_value_loads(tmp_path: Path) -> None:
    """A tree (children are trees) is a loop through properties/items: fine."""
    tree = {
        "type": "object",
        "properties": {"children": {"type": "array", "items": {"$ref": "#"}}},
    }
    schema = loaded_schema(task_with_schema(tmp_path, tree))

    assert errors_of(schema, {"children": [{"children": []}]}) == []
    assert errors_of(schema, {"children": [5]}) == ["5 is not of type 'object'"]


def test_a_referenced_file_that_is_no_schema_is_refused(tmp_path: Path) -> None:
    """The referenced file is checked like the schema itself."""
    write_json(tmp_path / "b.json", {"type": 5})
    error = load_error(task_with_schema(tmp_path, {"$ref": "b.json"}))
    assert "not a valid JSON Schema at type" in error.problem


def test_a_schema_put_together_without_loading_is_checked_before_a_run() -> None:
    """schema_problem says what the gate would refuse: a ref needing a file, a loop."""
    assert schema_problem({"type": "object"}) is None
    assert "cannot be resolved" in str(schema_problem({"$ref": "missing.json"}))
    assert "leads back to where it started" in str(schema_problem({"$ref": "#"}))


def test_the_files_a_schema_refers_to_share_one_budget_of_values(tmp_path: Path) -> None:
    """Many files each within the limit cannot add up to more than one file may hold."""
    for n in range(3):
        write_json(tmp_path / f"s{n}.json", {"enum": list(range(MAX_NODES // 2))})
    schema = {"anyOf": [{"$ref": f"s{n}.json"} for n in range(3)]}

    error = load_error(task_with_schema(tmp_path, schema))

    assert f"hold more than {MAX_NODES} values together" in error.problem
