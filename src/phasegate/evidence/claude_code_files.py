"""Claude Code's own files: what the runtime writes and reads for itself, never the agent's work.

A session touches files that belong to Claude Code, not to the task: plan mode has the model
write its plan to a file in Claude Code's plans folder (the Write or Edit tool names it), a
background Bash command's output is kept in a file under the temporary folder that the model
reads back, and Claude Code keeps its settings, memory and session logs in its config folder.
None of these is a change the agent made to the project, nor an escape from the work
directory. The documented list (by Claude Code version where it matters):

===============  ==========================================================  ==================
kind             where                                                       tools may
===============  ==========================================================  ==================
``plan``         ``<config>/plans/<name>.md``: ``~/.claude/plans/`` (plan     read and write
                 mode, 2.0 and later), under ``$CLAUDE_CONFIG_DIR`` when set
``task-output``  ``<temp>/claude[-<uid>]/…/tasks/<id>.output``: a background  read
                 command's output (2.0 and later; ``/tmp``, ``/private/tmp`` on
                 macOS, ``$CLAUDE_CODE_TMPDIR`` when set)
``config``       the config folder (``~/.claude/``, ``$CLAUDE_CONFIG_DIR``:   read
                 settings, ``CLAUDE.md`` memory, ``projects/`` session logs,
                 ``todos/``) and ``~/.claude.json``
===============  ==========================================================  ==================

Paths are recognised by their shape, so a transcript recorded on another machine (another
home, Windows) is judged alike: any folder named ``.claude`` outside the work directory is a
config folder. A write anywhere in a config folder but its plans stays an escape: settings
there can grant the agent permissions and add hooks. Its login (``.credentials.json``) is
none of these: reading it stays a read outside the work directory. Folders a run names in
its environment (``CLAUDE_CONFIG_DIR``, ``CLAUDE_CODE_TMPDIR``) are given as ``roots``
(:func:`environment_roots`): only the workspace observer does, from phasegate's own
environment; the path validators pass none, so they know a file by its shape alone. This
module only compares strings; callers apply it to paths
outside the work directory (the path validators) or inside it (the workspace observer, when
a config folder lies in the work directory, :func:`written_by_claude_code`).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

OwnFileKind = Literal["plan", "task-output", "config"]
"""What a Claude Code file is: a plan, a background task's output, config or session data."""

WRITABLE_KINDS: frozenset[OwnFileKind] = frozenset({"plan"})
"""The kinds Claude Code has the model write through its editing tools."""

_PLAN = re.compile(r"(?:^|/)\.claude/plans/[^/]+\.md$")
_TASK_OUTPUT = re.compile(
    r"^(?:/private)?/tmp/claude(?:-\d+)?/(?:[^/]+/)*tasks/[^/]+\.output$"
    r"|/Temp/claude(?:-\d+)?/(?:[^/]+/)*tasks/[^/]+\.output$",
    re.IGNORECASE,
)
_CONFIG = re.compile(r"(?:^|/)\.claude(?:/|$)|(?:^|/)\.claude\.json(?:\.backup)?$")
_CREDENTIALS = re.compile(r"(?:^|/)\.credentials\.json$")
"""Claude Code's login (its OAuth tokens, on Linux and Windows): never the runtime's to hand
the model, so a read of it stays a read outside the work directory."""


@dataclass(frozen=True, slots=True)
class OwnRoots:
    """Folders a run's environment gives Claude Code: its config folder and temp folder."""

    config: tuple[str, ...] = ()
    temp: tuple[str, ...] = ()


def environment_roots(environ: Mapping[str, str]) -> OwnRoots:
    """The folders ``CLAUDE_CONFIG_DIR`` and ``CLAUDE_CODE_TMPDIR`` name, if set."""
    config = environ.get("CLAUDE_CONFIG_DIR", "").strip()
    temp = environ.get("CLAUDE_CODE_TMPDIR", "").strip()
    return OwnRoots(
        config=(_posix(config),) if config else (), temp=(_posix(temp),) if temp else ()
    )


def claude_code_file(path: str, roots: OwnRoots | None = None) -> OwnFileKind | None:
    """The kind of Claude Code file ``path`` (absolute, POSIX or Windows) is, or None when it
    is not one of Claude Code's own."""
    posix = _posix(path)
    if _CREDENTIALS.search(posix):
        return None
    roots = roots or OwnRoots()
    for config in roots.config:
        rest = _below(posix, config)
        if rest is not None:
            return "plan" if re.fullmatch(r"plans/[^/]+\.md", rest) else "config"
    for temp in roots.temp:
        rest = _below(posix, temp)
        if rest is not None and re.search(r"(?:^|/)tasks/[^/]+\.output$", rest):
            return "task-output"
    if _PLAN.search(posix):
        return "plan"
    if _TASK_OUTPUT.search(posix):
        return "task-output"
    if _CONFIG.search(posix):
        return "config"
    return None


def may_touch(path: str, *, writes: bool, roots: OwnRoots | None = None) -> bool:
    """Whether a tool may name ``path`` (outside the work directory) without escaping it:
    any Claude Code file to read, only a plan to write."""
    kind = claude_code_file(path, roots)
    return kind is not None and (not writes or kind in WRITABLE_KINDS)


def own_folders_inside(workdir: str, roots: OwnRoots) -> list[str]:
    """The environment's Claude Code folders that lie inside ``workdir``, relative (POSIX):
    what Claude Code writes there is not the agent's work."""
    inside = []
    for folder in (*roots.config, *roots.temp):
        rest = _below(folder, _posix(workdir))
        if rest:
            inside.append(rest)
    return inside


RUNTIME_FOLDERS = frozenset(
    {
        "plans",
        "projects",
        "todos",
        "shell-snapshots",
        "session-env",
        "file-history",
        "statsig",
        "debug",
        "tasks",
    }
)
"""The folders of a config folder Claude Code itself writes in as a session runs (plans,
session logs, to-do lists, shell snapshots, file history...), unlike the settings, commands
and agents a project keeps in its own ``.claude/``."""


def written_by_claude_code(relative: str) -> bool:
    """Whether a file at ``relative`` (POSIX, inside a work directory) is one Claude Code
    writes for itself there: in a runtime folder of a ``.claude`` folder, or ``.claude.json``
    (a home that is the work directory)."""
    parts = relative.split("/")
    if parts[-1] in (".claude.json", ".claude.json.backup") and len(parts) == 1:
        return True
    return any(
        part == ".claude" and parts[i + 1] in RUNTIME_FOLDERS for i, part in enumerate(parts[:-2])
    )


def _posix(path: str) -> str:
    """``path`` with ``/`` for ``\\`` and ``..`` resolved (``.claude/../x`` is not in it)."""
    cleaned = path.strip().replace("\\", "/")
    if not cleaned:
        return ""
    normal = posixpath.normpath(cleaned)
    return "/" + normal.lstrip("/") if normal.startswith("//") else normal


def _below(path: str, folder: str) -> str | None:
    """``path`` relative to ``folder`` when it lies below it (or is it: ""), else None."""
    folder = folder.rstrip("/")
    if path == folder:
        return ""
    return path[len(folder) + 1 :] if path.startswith(folder + "/") else None
