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


def load_task(path: str | Path, *, files_root: str | Path | None = None) -> Task:
    """Read a task file; a schema path inside it is taken relative to the file.

    Files the task names (schema files, and files their ``$ref`` s point at) must lie inside
    ``files_root``, by default the task file's folder (symlinks resolved).

    Raises :class:`~phasegate.errors.TaskFileError` naming the file and the field for any
    problem: unreadable file, bad syntax, unknown key, wrong type, no phases, output phase not
    last, an ``output_schema`` that is not a JSON Schema or whose ``$ref`` cannot be followed,
    or a named file outside ``files_root`` (its ``option`` is then ``files_root``).
    """
    file = Path(path)
    return task_from_file_data(file, read_mapping(file, TaskFileError), files_root)


def task_from_file_data(
    file: Path, data: Mapping[str, Any], files_root: str | Path | None = None
) -> Task:
    """:func:`load_task` for a file already read into ``data``."""
    if "stages" in data and "phases" not in data:
        raise TaskFileError(
            file,
            None,
            "is a pipeline file (it has stages:), not a task file; a task file has phases:",
        )
    return task_from_mapping(data, source=file, files_root=files_root or file.parent)


def task_from_mapping(
    data: Mapping[str, Any],
    *,
    source: Path | None = None,
    files_root: str | Path | None = None,
    base_dir: str | Path | None = None,
) -> Task:
    """Build a task from already-parsed data; ``source`` (the file) names it in errors.

    Paths in the data are relative to ``base_dir`` (default: ``source``'s folder, or the
    working directory without one); files they name must lie inside ``files_root`` (default:
    ``source``'s folder, or anywhere for data without a source).
    """
    context = loading_context(source, files_root, base_dir)
    return validate_model(Task, data, path=source, error=TaskFileError, context=context)


def loading_context(
    source: Path | None, files_root: str | Path | None, base_dir: str | Path | None
) -> dict[str, Any]:
    """What validating a task or pipeline needs to find the files it names: the folder paths
    are relative to, the file it came from, and the folder those files must lie in (default:
    ``source``'s folder; anywhere for data without a source)."""
    base = Path(base_dir) if base_dir is not None else None
    folder = base or (source.parent if source is not None else Path.cwd())
    root = files_root if files_root is not None else folder if source is not None else None
    return {"base_dir": folder, "source": source, "files_root": root}
