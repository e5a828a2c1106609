"""Scratch folders that the next start cleans: temporary folders named after the process
that made them, so that what a killed process left behind can be found and removed.

``tempfile`` removes a temporary folder when its process ends well; a process killed with
``SIGKILL`` (or whose parent was, taking its group with it) leaves it behind, one per run,
forever. A scratch folder is named ``<prefix><pid>.<start>-<random>``: the process id and
its start time (in clock ticks since boot, from ``/proc``; 0 where there is none), so a
process id reused by another process later does not keep a dead one's folder alive.
:func:`sweep_dead` removes the folders of a prefix whose process is gone: only real folders
(never a link, removed through a descriptor of their parent) owned by this user, never the
folder of a process still alive.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from phasegate._files.confined import remove_inside

_NAME = re.compile(r"^(\d+)\.(\d+)-")


def make_scratch(prefix: str, *, parent: Path | None = None) -> Path:
    """A new private folder (mode 0700) named for this process, in ``parent`` (default: the
    system's temporary folder). Remove it with :func:`remove_scratch` when done; if this
    process is killed first, :func:`sweep_dead` of the same prefix removes it later."""
    stamp = f"{prefix}{os.getpid()}.{_start_time(os.getpid()) or 0}-"
    return Path(tempfile.mkdtemp(prefix=stamp, dir=parent))


def remove_scratch(folder: Path) -> None:
    """Remove ``folder`` and everything in it (what cannot be removed is left)."""
    shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def scratch_folder(prefix: str, *, parent: Path | None = None) -> Iterator[Path]:
    """A scratch folder for the block (as :func:`make_scratch`), removed after it."""
    folder = make_scratch(prefix, parent=parent)
    try:
        yield folder
    finally:
        remove_scratch(folder)


def sweep_dead(prefix: str, *, parent: Path | None = None) -> list[Path]:
    """Remove the scratch folders of ``prefix`` in ``parent`` (default: the system's
    temporary folder) whose process is no longer alive; the folders removed."""
    folder = Path(parent if parent is not None else tempfile.gettempdir())
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        match = _NAME.match(entry.name[len(prefix) :]) if entry.name.startswith(prefix) else None
        if match is None or _alive(int(match.group(1)), int(match.group(2))):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid():
            remove_inside(folder, entry.name)
            removed.append(folder / entry.name)
    return removed


def _alive(pid: int, start: int) -> bool:
    """Whether the process ``pid`` that started at ``start`` (0: unknown) still runs (a
    zombie, ended but not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process: alive, and not the one that made the folder
    found = _proc_stat(pid)
    if found is None:  # no /proc to ask: the process id is all there is
        return True
    state, now = found
    return state != "Z" and (not start or now == start)


def _start_time(pid: int) -> int | None:
    """When ``pid`` started, in clock ticks since boot (None where ``/proc`` cannot say)."""
    found = _proc_stat(pid)
    return found[1] if found is not None else None


def _proc_stat(pid: int) -> tuple[str, int] | None:
    """The state letter of ``pid`` and when it started (None without ``/proc``)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
        # The command name in parentheses may hold spaces; after it come field 3 (the
        # state) to field 22 (the start time).
        fields = text.rsplit(")", 1)[1].split()
        return fields[0], int(fields[19])
    except (OSError, IndexError, ValueError):
        return None
