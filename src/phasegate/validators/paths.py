"""Paths the agent names, normalized against the work directory (pure string logic).

Everything is compared as POSIX paths relative to the work directory: ``./src/a.py``,
``src//a.py`` and ``/work/dir/src/a.py`` are all ``src/a.py``. A path that leaves the work
directory (absolute elsewhere, or climbing out with ``..``) normalizes to ``None``.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from phasegate.validators.issues import Issue, IssueCode
from phasegate.validators.tools import CallRecord
from phasegate.validators.windows import PhaseWindow

PATH_KEYS = ("file_path", "notebook_path", "path")
"""Tool input keys that name a file or directory."""


def relative_to_workdir(path: str, workdir: str) -> str | None:
    """``path`` relative to ``workdir`` in POSIX form, or None when it lies outside."""
    cleaned = path.strip().replace("\\", "/")
    if not cleaned:
        return None
    root = posixpath.normpath(workdir.replace("\\", "/"))
    joined = posixpath.normpath(posixpath.join(root, cleaned))
    if joined == root:
        return "."
    if not joined.startswith(root.rstrip("/") + "/"):
        return None
    return joined[len(root.rstrip("/")) + 1 :]


def check_paths_inside(
    windows: Sequence[PhaseWindow], calls: Sequence[CallRecord], workdir: str
) -> list[Issue]:
    """``path_outside_workdir``: a tool call names a path outside the work directory.

    The issue belongs to the phase whose window holds the call.
    """
    issues: list[Issue] = []
    for record in calls:
        for key in PATH_KEYS:
            value = record.call.input.get(key)
            if not isinstance(value, str) or relative_to_workdir(value, workdir) is not None:
                continue
            owner = next((w.index for w in windows if record.position in w), None)
            issues.append(
                Issue.of(
                    IssueCode.PATH_OUTSIDE_WORKDIR,
                    f"{record.call.name} was called with {key}={value!r}, "
                    f"which is outside the work directory {workdir}.",
                    phase=owner,
                    field=f"{record.call.name}.{key}",
                    provided=value,
                    requirement=f"Only touch files inside {workdir}.",
                )
            )
    return issues
