"""What the file layer needs from the operating system and gets differently on each: open
flags POSIX has and Windows lacks, and exclusive locks (``fcntl`` on POSIX, ``msvcrt`` on
Windows). Every module that opens or locks a file the careful way takes them from here, so
importing phasegate never fails on a platform for want of one.

On Windows (never run by phasegate's own tests: docs/compatibility.md says what was tested
where) the flags are 0: no ``O_NOFOLLOW`` (creating a symbolic link there needs Developer
Mode or an administrator, and the folders phasegate writes in are still checked link by link
with ``lstat``), no FIFOs to guard against (``O_NONBLOCK``), descriptors not inherited by
child processes anyway (``O_CLOEXEC``), and no descriptors of folders (``O_DIRECTORY``,
``dir_fd``: :data:`FOLDER_DESCRIPTORS` says whether there are).
"""

from __future__ import annotations

import os
import sys
import time

NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)
"""``O_NOFOLLOW`` where there is one: opening a symbolic link fails instead of following it."""
NONBLOCK: int = getattr(os, "O_NONBLOCK", 0)
"""``O_NONBLOCK`` where there is one: opening a FIFO never waits for its other end."""
CLOEXEC: int = getattr(os, "O_CLOEXEC", 0)
"""``O_CLOEXEC`` where there is one: a child process does not inherit the descriptor."""
DIRECTORY: int = getattr(os, "O_DIRECTORY", 0)
"""``O_DIRECTORY`` where there is one: opening anything but a folder fails."""
BINARY: int = getattr(os, "O_BINARY", 0)
"""``O_BINARY`` on Windows, where a descriptor opened without it reads CRLF as LF."""

FOLDER_DESCRIPTORS = os.open in os.supports_dir_fd and os.lstat in os.supports_dir_fd
"""Whether a folder can be opened and worked in through its descriptor (POSIX, not
Windows): what :func:`~phasegate._files.confined.remove_inside` does to never follow a link
swapped in after a check."""

_WINDOWS_RETRY = 0.05
"""Seconds between two tries for a lock on Windows, whose ``msvcrt`` has no waiting lock."""


def lock_exclusive(descriptor: int, *, wait: bool = True) -> None:
    """Lock the file open as ``descriptor`` exclusively against every other process, until
    it is closed. ``wait``: until the holder lets go; else raise :class:`BlockingIOError`
    at once when another process holds it."""
    if sys.platform == "win32":
        import msvcrt

        os.lseek(descriptor, 0, os.SEEK_SET)
        while True:
            try:
                msvcrt.locking(descriptor, msvcrt.LK_NBLCK, 1)
                return
            except OSError:
                if not wait:
                    raise BlockingIOError("the file is locked by another process") from None
                time.sleep(_WINDOWS_RETRY)
    else:
        import fcntl

        fcntl.flock(descriptor, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)


WINDOWS_DEVICES = frozenset(
    {"CON", "PRN", "AUX", "NUL", *(f"{kind}{n}" for kind in ("COM", "LPT") for n in range(1, 10))}
)
"""Names Windows keeps for devices, whatever their case and extension (``nul.txt`` too)."""


def windows_device(name: str) -> bool:
    """Whether a file named ``name`` cannot exist on Windows: its part before the first dot
    is a device's name (``con``, ``NUL.gate.r1``)."""
    return name.split(".", 1)[0].upper() in WINDOWS_DEVICES
