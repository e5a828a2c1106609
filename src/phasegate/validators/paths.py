"""Paths the agent names, normalized against the work directory (pure string logic).

Everything is compared as POSIX paths relative to the work directory: ``./src/a.py``,
``src//a.py`` and ``/work/dir/src/a.py`` are all ``src/a.py``. A path that leaves the work
directory (absolute elsewhere, climbing out with ``..``, or starting at the home folder with
``~/``, which Claude Code expands) normalizes to ``None``.

A work directory with a drive letter (``C:\\Users\\x\\proj``) was recorded on Windows: there
both separators count, drive letters and names compare case-insensitively, a path on another
drive is outside, and ``\\a.md`` is the root of the work directory's drive. Elsewhere names
are case-sensitive, and a drive-letter path is never inside the work directory.

The policy for tools that name a path outside the work directory: a tool that may change a
file fails the gate (``path_outside_workdir``); a tool that only reads is a finding
(``read_outside_workdir``), unless the task forbids such reads. Claude Code's own files
(:mod:`phasegate.evidence.claude_code_files`: its plans, a background task's output, its
config folder) are neither: a tool may read them, and write a plan.
"""

from __future__ import annotations

import functools
import ntpath
import posixpath
import re
from collections.abc import Iterator, Sequence

from phasegate.evidence.claude_code_files import may_touch
from phasegate.evidence.transcript import ToolCall
from phasegate.validators.issues import Issue, IssueCode
from phasegate.validators.tools import CallRecord
from phasegate.validators.windows import PhaseWindow

PATH_KEYS = ("file_path", "notebook_path", "path")
"""Tool input keys that name a file or directory."""

READ_TOOLS = frozenset({"Read", "Glob", "Grep", "LS", "NotebookRead"})
"""Tools that only look at files. Any other tool naming a path may change it."""

_DRIVE = re.compile(r"[A-Za-z]:(?:[\\/]|$)")
_UNC = re.compile(r"[\\/]{2}[^\\/]+[\\/][^\\/]+")


def is_windows_path(path: str) -> bool:
    """Whether ``path`` is an absolute Windows path: a drive letter or a UNC share."""
    cleaned = path.strip()
    return bool(_DRIVE.match(cleaned) or (cleaned.startswith("\\") and _UNC.match(cleaned)))


def relative_to_workdir(path: str, workdir: str) -> str | None:
    """``path`` relative to ``workdir`` in POSIX form, or None when it lies outside.

    ``"."`` is the work directory itself. On a Windows work directory the result keeps the
    case ``path`` gave its names in.
    """
    # One judgment asks about the same call's path several times (the run's and each phase's
    # reconciliation, paths outside), and a gate judges the transcript so far at every stop,
    # and agents name the same few files again and again: each answer is worked out once.
    # Long strings are not kept, so odd values in a transcript hold at most ~4 MB here.
    if len(path) <= _CACHED_LENGTH and len(workdir) <= _CACHED_LENGTH:
        return _cached_relative(path, workdir)
    return _relative(path, workdir)


_CACHED_LENGTH = 1024
"""The longest path (and work directory) whose relative form is cached."""


@functools.lru_cache(maxsize=1024)
def _cached_relative(path: str, workdir: str) -> str | None:
    """:func:`_relative`, remembered: it is pure, and its answer (a string or None) is
    immutable, so a cached answer is the same as a fresh one."""
    return _relative(path, workdir)


def _relative(path: str, workdir: str) -> str | None:
    """:func:`relative_to_workdir`, worked out."""
    cleaned = path.strip()
    if not cleaned or _from_home(cleaned):
        return None
    if is_windows_path(workdir):
        return _windows_relative(cleaned, workdir.strip())
    if _DRIVE.match(cleaned):
        return None  # a Windows path cannot lie in a POSIX work directory
    root = _posix_normpath(workdir.replace("\\", "/"))
    joined = _posix_normpath(posixpath.join(root, cleaned.replace("\\", "/")))
    if joined == root:
        return "."
    if not joined.startswith(root.rstrip("/") + "/"):
        return None
    relative = joined[len(root.rstrip("/")) + 1 :]
    # Only a relative work directory ("..") leaves ".." in what follows it: that climbs out.
    return None if ".." in relative.split("/") else relative


def _from_home(path: str) -> bool:
    """Whether ``path`` starts at the home folder: Claude Code expands ``~`` and ``~/`` (and
    ``~\\`` on Windows) before it opens a file, whatever the working directory."""
    return path == "~" or path.startswith(("~/", "~\\"))


def _posix_normpath(path: str) -> str:
    """``posixpath.normpath``, with a leading ``//`` (which POSIX lets it keep) as ``/``."""
    normal = posixpath.normpath(path)
    return "/" + normal.lstrip("/") if normal.startswith("//") else normal


def _windows_relative(path: str, workdir: str) -> str | None:
    root = _parts(ntpath.normpath(workdir))
    # ntpath.join resolves what Windows would: another drive wins, "\a" is the drive's root.
    full = _parts(ntpath.normpath(ntpath.join(ntpath.normpath(workdir), path)))
    if len(full) < len(root) or any(
        mine.casefold() != theirs.casefold() for mine, theirs in zip(full, root, strict=False)
    ):
        return None
    rest = full[len(root) :]
    # No Windows file name holds a colon ("a.md:x" is a data stream of a.md, "A:" a drive).
    if ".." in rest or any(":" in part for part in rest):
        return None
    return "/".join(rest) or "."


def _parts(windows_path: str) -> list[str]:
    return [part for part in windows_path.replace("/", "\\").split("\\") if part]


def touches_only_own_files(call: ToolCall) -> bool:
    """Whether ``call`` names a path and every path it names is one of Claude Code's own
    files the tool may touch (a plan it writes, a task output it reads): the runtime's
    bookkeeping, not the agent's work, so it leaves a read-only task read-only."""
    paths = [v for key in PATH_KEYS if isinstance(v := call.input.get(key), str) and v.strip()]
    writes = call.name not in READ_TOOLS
    return bool(paths) and all(may_touch(path, writes=writes) for path in paths)


def check_paths_inside(
    windows: Sequence[PhaseWindow],
    calls: Sequence[CallRecord],
    workdir: str,
    *,
    allow_reads: bool = True,
) -> list[Issue]:
    """``path_outside_workdir``: a tool call names a path outside the work directory.

    Tools that only read are left out when ``allow_reads`` (see :func:`find_reads_outside`).
    The issue belongs to the phase whose window holds the call.
    """
    issues: list[Issue] = []
    for record, key, value, owner in _outside(windows, calls, workdir):
        reads = record.call.name in READ_TOOLS
        if reads and allow_reads:
            continue
        issues.append(
            Issue.of(
                IssueCode.PATH_OUTSIDE_WORKDIR,
                f"{record.call.name} was called with {key}={value!r}, "
                f"which is outside the work directory {workdir}.",
                phase=owner,
                field=f"{record.call.name}.{key}",
                provided=value,
                requirement=(
                    f"Read only files inside {workdir}: this task does not allow reading others."
                    if reads
                    else f"Only touch files inside {workdir}."
                ),
            )
        )
    return issues


def find_reads_outside(
    windows: Sequence[PhaseWindow], calls: Sequence[CallRecord], workdir: str
) -> list[Issue]:
    """``read_outside_workdir`` findings: a reading tool names a path outside the work
    directory. Reported, not judged."""
    return [
        Issue.of(
            IssueCode.READ_OUTSIDE_WORKDIR,
            f"{record.call.name} read {value!r} ({key}), outside the work directory {workdir}.",
            phase=owner,
            field=f"{record.call.name}.{key}",
            provided=value,
        )
        for record, key, value, owner in _outside(windows, calls, workdir)
        if record.call.name in READ_TOOLS
    ]


def _outside(
    windows: Sequence[PhaseWindow], calls: Sequence[CallRecord], workdir: str
) -> Iterator[tuple[CallRecord, str, str, int | None]]:
    """Each call's path outside the work directory: the call, its key, the path, its phase."""
    for record in calls:
        for key in PATH_KEYS:
            value = record.call.input.get(key)
            if not isinstance(value, str) or not value.strip():
                continue  # a blank path names nothing
            if relative_to_workdir(value, workdir) is not None:
                continue
            if may_touch(value, writes=record.call.name not in READ_TOOLS):
                continue  # Claude Code's own file: neither work nor an escape
            owner = next((w.index for w in windows if record.position in w), None)
            yield record, key, value, owner
