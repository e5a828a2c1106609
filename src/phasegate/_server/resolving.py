"""From a run request to what runs: paths checked against the root, the definition loaded.

Every path in a request (the work directory, a task or pipeline file) must name something
inside the root once symlinks are resolved, and never the service's own ``.phasegate``
folder there. A problem is a 400 naming the request field, before anything runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from phasegate._files.confined import OutsideFolderError, resolve_inside
from phasegate._server.problems import RequestProblem, root_relative
from phasegate.client.schema import DefinitionRequest
from phasegate.errors import PipelineFileError, TaskFileError
from phasegate.modes import STATE_DIR
from phasegate.phases.loading import load_task, task_from_mapping
from phasegate.phases.model import Task
from phasegate.phases.pipeline import Pipeline, load_pipeline, pipeline_from_mapping


@dataclass(frozen=True, slots=True)
class ResolvedRequest:
    """A request's definition as loaded and its work directory as found."""

    definition: Task | Pipeline
    workdir: Path
    """The directory named in the request, resolved (the copy's source with ``copy_workdir``)."""


def resolve_request(root: Path, request: DefinitionRequest) -> ResolvedRequest:
    """Check the request's paths and load its definition; raises :class:`RequestProblem`."""
    workdir = inside_root(root, request.workdir, "workdir", "directory")
    if request.task is not None:
        return ResolvedRequest(_definition(root, request.task, "task"), workdir)
    assert request.pipeline is not None
    return ResolvedRequest(_definition(root, request.pipeline, "pipeline"), workdir)


def inside_root(root: Path, value: str, field: str, kind: Literal["directory", "file"]) -> Path:
    """``value`` (relative to ``root``, or absolute) resolved, when it is a ``kind`` inside
    ``root`` and outside the service's own folder."""
    if "\x00" in value:
        raise RequestProblem(400, "bad_path", f"{field} contains a NUL character", field=field)
    base = root.resolve()
    try:
        resolved = resolve_inside(base, value, strict=True)
    except FileNotFoundError:
        raise RequestProblem(
            400, "not_found", f"{field} {value!r} does not exist under the root", field=field
        ) from None
    except OSError as exc:
        raise RequestProblem(
            400, "bad_path", f"{field} {value!r} cannot be resolved: {exc.strerror or exc}",
            field=field,
        ) from None  # fmt: skip
    except OutsideFolderError:
        raise RequestProblem(
            400, "outside_root",
            f"{field} {value!r} leads outside the root (symlinks are followed); name a path "
            "inside the service's root", field=field,
        ) from None  # fmt: skip
    if resolved.is_relative_to(base / STATE_DIR) or (kind == "directory" and resolved == base):
        raise RequestProblem(
            400, "reserved_path", f"{field} {value!r} holds or is the service's own {STATE_DIR} "
            "folder (its token, every run); name a folder inside the root", field=field,
        )  # fmt: skip
    if not (resolved.is_dir() if kind == "directory" else resolved.is_file()):
        raise RequestProblem(
            400, "not_a_" + kind, f"{field} {value!r} is not a {kind}", field=field
        )
    return resolved


def _definition(root: Path, value: str | Mapping[str, Any], field: str) -> Task | Pipeline:
    try:
        if isinstance(value, str):
            path = inside_root(root, value, field, "file")
            if field == "task":
                return load_task(path, files_root=root)
            return load_pipeline(path, files_root=root)
        if field == "task":
            return task_from_mapping(value, base_dir=root, files_root=root)
        return pipeline_from_mapping(value, base_dir=root, files_root=root)
    except (TaskFileError, PipelineFileError) as exc:
        where = f"{field}.{exc.field}" if exc.field and not isinstance(value, str) else field
        problem = exc.problem if not isinstance(value, str) else str(exc)
        raise RequestProblem(
            400, f"invalid_{field}", root_relative(problem, root), field=where
        ) from None
