"""Temporary folders that a killed process does not leave behind for good.

phasegate copies a work directory into a temporary folder for each batch unit, keeps a unit's
outcome and a scripted model's ``HOME`` in others, and backs a work directory up before a
run. A process ended with SIGKILL (the OOM killer, a cancelled CI job) removes none of them,
and each may hold a whole copy of a project. So each such folder is made by
:func:`scratch_folder` or :func:`make_scratch`, whose name says which process made it, and
:func:`sweep_dead` removes the folders of a prefix whose maker is dead: the next batch run
calls it, and so does the next backup.

A name is ``PREFIX-MACHINE-PID-START-RANDOM`` in the system's temporary folder:

- ``MACHINE`` is 8 hex digits of the machine and process namespace (Linux: the boot id and
  the pid namespace; elsewhere the host name): a folder made in another container that
  shares ``/tmp`` is never taken for ours, since its pid means nothing here;
- ``PID`` and ``START`` (the process's start time in clock ticks, Linux only; else 0) name
  the maker: it is dead when no process has that pid, or the process with that pid started
  at another time (the pid was reused), or it is a zombie. They are written zero-padded to
  :data:`PID_DIGITS` and :data:`START_DIGITS` digits, so a folder's path is as long in
  every process: a scripted model's replies name files in it (a batch unit's copy), and
  their token counts must not change with the number of digits of a pid (folders named
  before, without the padding, are still read).

A folder is removed only when all of this holds: its name matches exactly, it is a real
folder (not a link), owned by this user, directly in the temporary folder (or the folder a
caller names, as a recording's writer names the folder it writes in), made on this
machine, and its maker is dead. It is removed without following a link inside it
(:func:`~phasegate._files.confined.remove_inside`). Whatever cannot be decided is left.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import socket
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from phasegate._files.confined import remove_inside

_PREFIX = re.compile(r"phasegate-[a-z]+(?:-[a-z]+)*")
"""What a prefix may be: ``phasegate-`` and lower-case words, so no name of another program
(or of a longer prefix followed by a pid) is mistaken for one of ours."""


PID_DIGITS = 10
"""The width a folder name gives the maker's pid (a 32-bit pid fits)."""
START_DIGITS = 12
"""The width a folder name gives the maker's start time (clock ticks: 300 years at 100 Hz)."""


def scratch_folder(prefix: str) -> contextlib.AbstractContextManager[Path]:
    """A new private temporary folder named for this process (see the module), removed with
    everything in it when the block ends; if the process is killed instead, the next
    :func:`sweep_dead` of ``prefix`` removes it."""
    return _scratch(make_scratch(prefix))


def make_scratch(prefix: str, *, root: Path | None = None) -> Path:
    """A new private temporary folder named for this process, for a caller that removes it
    itself with :func:`remove_scratch` (a backup, a scripted model's ``HOME``, a service
    run's folder); :func:`sweep_dead` removes it once this process is dead. ``prefix`` is
    ``phasegate-`` and lower-case words (``phasegate-unit``). ``root``: the folder to make
    it in instead of the temporary folder (a recording is built beside its place, so a
    rename puts it there)."""
    _check(prefix)
    machine, pid, start = _stamp()
    stamp = f"{machine}-{pid:0{PID_DIGITS}d}-{start:0{START_DIGITS}d}"
    return Path(tempfile.mkdtemp(prefix=f"{prefix}-{stamp}-", dir=root))


def sweep_dead(prefix: str, *, root: Path | None = None) -> list[Path]:
    """Remove the folders of ``prefix`` in the temporary folder (or ``root``) whose maker is
    dead, and return them. Never raises for a folder it cannot look at or remove: it leaves
    it."""
    _check(prefix)
    root = Path(tempfile.gettempdir()) if root is None else root
    pattern = re.compile(rf"{re.escape(prefix)}-([0-9a-f]{{8}})-(\d+)-(\d+)-[A-Za-z0-9_]+")
    machine = _stamp()[0]
    removed: list[Path] = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return removed
    for entry in entries:
        match = pattern.fullmatch(entry.name)
        if match is None or match.group(1) != machine:
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
            continue
        if _alive(int(match.group(2)), int(match.group(3))):
            continue
        remove_inside(root, entry.name)
        if not os.path.lexists(entry.path):
            removed.append(Path(entry.path))
    return removed


def remove_scratch(folder: Path) -> None:
    """Remove a folder :func:`make_scratch` made, with everything in it (what cannot be
    removed is left for the next :func:`sweep_dead`)."""
    shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def _scratch(path: Path) -> Iterator[Path]:
    try:
        yield path
    finally:
        remove_scratch(path)


def _check(prefix: str) -> None:
    if not _PREFIX.fullmatch(prefix):
        raise ValueError(f"a scratch prefix is phasegate- and lower-case words, not {prefix!r}")


def _stamp() -> tuple[str, int, int]:
    """(machine, pid, start) of this process, as folder names hold them."""
    pid = os.getpid()
    return _machine(), pid, _started(pid) or 0


def _machine() -> str:
    """8 hex digits naming this machine and pid namespace (the same for its processes)."""
    parts = []
    for source in ("/proc/sys/kernel/random/boot_id", "/proc/self/ns/pid"):
        with contextlib.suppress(OSError):
            boot = "boot" in source
            parts.append(Path(source).read_text(encoding="utf-8") if boot else os.readlink(source))
    if not parts:
        parts.append(socket.gethostname())
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:8]


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (state first), or None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold anything, ")" included.
    return text.rpartition(")")[2].split()


def _started(pid: int) -> int | None:
    """When process ``pid`` started, in clock ticks since boot (field 22), or None."""
    fields = _stat_fields(pid)
    return int(fields[19]) if fields and len(fields) > 19 and fields[19].isdigit() else None


def _alive(pid: int, start: int) -> bool:
    """Whether the process that made a folder still runs (unsure counts as alive)."""
    if pid <= 0:
        return True  # never ours: os.kill would address a group
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process: it exists
    fields = _stat_fields(pid)
    if fields is None:
        return True  # no /proc here: the pid alone says so
    if fields[0] == "Z":
        return False  # killed, not yet reaped: it will never use the folder again
    return start == 0 or _started(pid) in (None, start)
