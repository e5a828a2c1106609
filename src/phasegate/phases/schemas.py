"""JSON Schemas inside task and pipeline files: inline, or a file relative to the file.

Files named inside a task or pipeline file (schemas, prompt files, task files) are found
relative to it: the loader passes its directory as ``base_dir`` in the validation context.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
from pydantic import ValidationInfo


def base_dir(info: ValidationInfo) -> Path:
    """The directory of the file being loaded (the working directory for data from code)."""
    return Path((info.context or {}).get("base_dir", Path.cwd()))


def schema_from_file_value(value: object, info: ValidationInfo) -> object:
    """A schema field's value with a path (relative to the file being loaded) read in."""
    if isinstance(value, str | Path):
        return read_schema_file(base_dir(info) / value)
    return value


def checked_schema(value: dict[str, Any] | None) -> dict[str, Any] | None:
    """``value`` if it is a valid JSON Schema; a ValueError saying where it is not."""
    if value is not None:
        try:
            jsonschema.validators.validator_for(value).check_schema(value)
        except jsonschema.SchemaError as exc:
            where = "/".join(str(p) for p in exc.absolute_path) or "the top level"
            raise ValueError(f"not a valid JSON Schema at {where}: {exc.message}") from None
    return value


def read_schema_file(path: Path) -> object:
    """Parse a schema file (JSON, or YAML by suffix); a ValueError naming the file."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read schema file {path}: {exc.strerror}") from None
    if path.suffix.lower() in {".yaml", ".yml"}:
        import yaml  # only needed for YAML schema files

        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ValueError(f"schema file {path} is not valid YAML: {exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"schema file {path} is not valid JSON: {exc}") from None
