"""JSON Schemas inside task and pipeline files: inline, or a file relative to the file.

Files named inside a task or pipeline file (schemas, prompt files, task files) are found
relative to it: the loader passes its directory as ``base_dir`` in the validation context,
the file itself as ``source``, and the folder such files must stay in as ``files_root``
(absent for data built in Python, which may name any file). A loaded schema is checked,
its ``$ref`` s are followed and it is made self-contained (:mod:`.schema_refs`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import referencing
from jsonschema.protocols import Validator
from pydantic import ValidationInfo

from phasegate._files import ParseProblem, confined_path, parse_data, read_text
from phasegate.phases.schema_refs import check_stands_alone, self_contained

_INLINE = "<inline>"
_NO_RETRIEVAL: referencing.Registry[Any] = referencing.Registry()


def base_dir(info: ValidationInfo) -> Path:
    """The directory of the file being loaded (the working directory for data from code)."""
    return Path((info.context or {}).get("base_dir", Path.cwd()))


def files_root(info: ValidationInfo) -> Path | None:
    """The folder files named in the data must stay in (None: data from code, anywhere)."""
    root = (info.context or {}).get("files_root")
    return Path(root) if root is not None else None


def named_file(value: str | Path, info: ValidationInfo, *, what: str) -> Path:
    """The file ``value`` names, relative to the file being loaded and inside its files
    root; an OptionValueError (option ``files_root``) when it lies outside."""
    return confined_path(base_dir(info) / value, files_root(info), what=what)


def load_schema(value: object, info: ValidationInfo) -> dict[str, Any] | None:
    """A schema field's value (a mapping, or a path to a schema file) as a checked,
    self-contained JSON Schema; a ValueError saying what is wrong."""
    if value is None:
        return None
    if isinstance(value, str | Path):
        origin = named_file(value, info, what="schema file")
        data = read_schema_file(origin)
    elif isinstance(value, dict):
        source = (info.context or {}).get("source")
        origin, data = (Path(source) if source else base_dir(info) / _INLINE), value
    else:
        raise ValueError("expected a JSON Schema object or a path to a schema file")
    schema = checked_schema(data)
    if not isinstance(schema, dict):
        raise ValueError(f"expected a JSON Schema object, found a {type(schema).__name__}")
    return self_contained(schema, origin=origin, root=files_root(info), read=_read_checked)


def checked_schema(value: object) -> object:
    """``value`` if it is JSON data and a valid JSON Schema; a ValueError saying where not."""
    problem = _not_json(value)
    if problem:
        raise ValueError(f"not a valid JSON Schema: {problem}")
    if isinstance(value, dict):
        if not isinstance(value.get("$schema", ""), str):
            raise ValueError("not a valid JSON Schema: $schema must be a string, a dialect's URI")
        try:
            jsonschema.validators.validator_for(value).check_schema(value)
        except jsonschema.SchemaError as exc:
            where = "/".join(str(p) for p in exc.absolute_path) or "the top level"
            raise ValueError(f"not a valid JSON Schema at {where}: {exc.message}") from None
        except RecursionError:
            raise ValueError("not a valid JSON Schema: it nests too deeply") from None
    return value


def read_schema_file(path: Path) -> object:
    """Parse a schema file (JSON, or YAML by suffix); a ValueError naming the file."""
    try:
        text = read_text(path)
    except OSError as exc:
        raise ValueError(f"cannot read schema file {path}: {exc.strerror or exc}") from None
    except ParseProblem as exc:
        raise ValueError(f"schema file {path} {exc}") from None
    yaml_syntax = path.suffix.lower() in {".yaml", ".yml"}
    try:
        return parse_data(text, json_syntax=not yaml_syntax)
    except ParseProblem as exc:
        kind = "YAML" if yaml_syntax else "JSON"
        raise ValueError(f"schema file {path} is not valid {kind}: {exc}") from None


def schema_problem(schema: object) -> str | None:
    """What keeps ``schema`` from being applied as it is (not a valid schema, a reference
    that needs a file, a reference loop), or None. Every loaded schema passes; a schema put
    together in code without loading may not."""
    try:
        checked = checked_schema(schema)
        if not isinstance(checked, dict):
            return "expected a JSON Schema object"
        check_stands_alone(checked)
    except ValueError as exc:
        return str(exc)
    return None


def schema_validator(schema: dict[str, Any]) -> Validator:
    """A validator for a loaded schema that never reads a file or the network: a loaded
    schema holds everything its references need."""
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, registry=_NO_RETRIEVAL)


def _read_checked(path: Path) -> object:
    return checked_schema(read_schema_file(path))


def _not_json(value: object) -> str | None:
    """What keeps ``value`` from being JSON data (YAML also has dates, sets, binary...)."""
    stack: list[tuple[object, str]] = [(value, "the top level")]
    seen: set[int] = set()  # data built in Python may share (or loop back to) a container
    while stack:
        item, where = stack.pop()
        if isinstance(item, dict | list):
            if id(item) in seen:
                continue
            seen.add(id(item))
        if isinstance(item, dict):
            for key, inner in item.items():
                if not isinstance(key, str):
                    return f"{where} has the key {key!r}; keys must be strings"
                stack.append((inner, key if where == "the top level" else f"{where}/{key}"))
        elif isinstance(item, list):
            stack += [(inner, f"{where}/{index}") for index, inner in enumerate(item)]
        elif not isinstance(item, str | int | float | bool) and item is not None:
            return f"{where} holds a {type(item).__name__}, which JSON does not have"
    return None
