"""Loading task files (YAML or JSON) into :class:`~phasegate.phases.model.Task`.

A pipeline's stages load their task files through here too
(:func:`phasegate.phases.pipeline.load_pipeline`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from phasegate._files import read_mapping, validate_model
from phasegate.errors import TaskFileError
from phasegate.phases.model import Task


def load_task(path: str | Path) -> Task:
    """Read a task file; a schema path inside it is taken relative to the file.

    Raises :class:`~phasegate.errors.TaskFileError` naming the file and the field for any
    problem: unreadable file, bad syntax, unknown key, wrong type, no phases, output phase not
    last, or an ``output_schema`` that is not a JSON Schema.
    """
    file = Path(path)
    data = read_mapping(file, TaskFileError)
    return task_from_mapping(data, source=file)


def task_from_mapping(data: Mapping[str, Any], *, source: Path | None = None) -> Task:
    """Build a task from already-parsed data; ``source`` (the file) names it in errors."""
    base_dir = source.parent if source is not None else Path.cwd()
    return validate_model(
        Task, data, path=source, error=TaskFileError, context={"base_dir": base_dir}
    )
