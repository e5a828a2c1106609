"""How phasegate starts worker processes on this platform: the one place that decides.

Which command starts what (``docs/compatibility.md`` has the table):

- ``phasegate serve`` runs each run in a process of multiprocessing's: from the fork server
  (it imported everything once, a run starts in milliseconds) where the platform has one,
  from a fresh interpreter (``spawn``) elsewhere. ``PHASEGATE_START_METHOD=spawn`` forces
  ``spawn``, so the tests can run the service the way Windows would, and a machine with no
  short temporary folder can do without the fork server's socket.
- A batch's local units and the service's run processes need process groups (a unit or a
  run is ended with everything it started) and POSIX signals; on Windows those commands say
  so at start-up, in one line (:func:`require_process_groups`).
- A pipeline's ``isolation: process`` starts one agent session per stage (the agent's own
  CLI process), no Python worker: it runs wherever a run does. Recovery reads files only.

The fork server listens on a Unix socket in a ``pymp-`` folder in the temporary folder,
and a socket's path has a hard limit (108 bytes on Linux, 104 on macOS): under a long
``TMPDIR`` (every Mac's is about 49 characters) the service could not start.
:func:`socket_folder_base` picks where the socket's folder goes: the temporary folder when
the socket's path fits, else the first short system folder that does.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import tempfile
from pathlib import Path
from typing import Literal

from phasegate.errors import UsageError

StartMethod = Literal["forkserver", "spawn"]

START_METHOD_VARIABLE = "PHASEGATE_START_METHOD"
"""The environment variable that forces a start method: ``spawn`` or ``forkserver``."""

START_METHODS: tuple[StartMethod, ...] = ("forkserver", "spawn")

SOCKET_PATH_LIMIT = 104 if sys.platform == "darwin" else 108
"""The bytes a Unix socket's path may take, its final NUL included (``sun_path``)."""

SOCKET_SUFFIX = len("/pymp-12345678/listener-12345678")
"""What multiprocessing adds to its temporary folder for the fork server's socket."""

SHORT_FOLDERS = ("/tmp", "/var/tmp", "/usr/tmp")
"""Where a socket's folder goes when the temporary folder is too long for it (the folders
CPython 3.14 itself falls back to)."""


def start_method() -> StartMethod:
    """The start method of the service's run processes: ``PHASEGATE_START_METHOD`` when set,
    else ``forkserver`` where the platform has it, else ``spawn``."""
    forced = os.environ.get(START_METHOD_VARIABLE, "").strip()
    available = multiprocessing.get_all_start_methods()
    if forced:
        if forced not in START_METHODS or forced not in available:
            usable = [method for method in START_METHODS if method in available]
            raise UsageError(
                f"{START_METHOD_VARIABLE}={forced!r} is not a start method this platform has; "
                f"set it to one of: {', '.join(usable)}, or unset it"
            )
        return forced
    return "forkserver" if "forkserver" in available else "spawn"


def socket_fits(folder: str | Path, suffix: int = SOCKET_SUFFIX) -> bool:
    """Whether a socket ``suffix`` bytes below ``folder`` stays within the limit."""
    return len(os.fsencode(str(folder))) + suffix + 1 <= SOCKET_PATH_LIMIT


def socket_folder_base(name_length: int) -> Path:
    """The folder to make a ``name_length``-byte folder in that will hold the fork server's
    socket: the temporary folder when it is short enough, else the first usable of
    :data:`SHORT_FOLDERS`. Raises :class:`~phasegate.errors.UsageError` naming the path, the
    limit and what to do when none is."""
    return short_base(
        1 + name_length + SOCKET_SUFFIX,
        "the fork server's socket",
        f"{START_METHOD_VARIABLE}=spawn (no socket; each run starts a second slower)",
    )


def short_base(below: int, what: str, instead: str, temp: str | None = None) -> Path:
    """A folder in which a socket ``below`` bytes further down fits: ``temp`` (default: the
    temporary folder) when it does, else the first usable of :data:`SHORT_FOLDERS`. Raises
    :class:`~phasegate.errors.UsageError` naming ``what`` would be too long, where, the limit,
    and what to do: a shorter ``TMPDIR``, or ``instead``."""
    base = Path(tempfile.gettempdir() if temp is None else temp)
    if socket_fits(base, below):
        return base
    for candidate in SHORT_FOLDERS:
        if socket_fits(candidate, below) and _writable_folder(candidate):
            return Path(candidate)
    length = len(os.fsencode(str(base))) + below
    raise UsageError(
        f"{what} would be {length} bytes long under the temporary folder {base}, and this "
        f"system allows {SOCKET_PATH_LIMIT - 1}; none of {', '.join(SHORT_FOLDERS)} is a "
        f"writable folder to put it in instead: set TMPDIR to a folder of at most "
        f"{SOCKET_PATH_LIMIT - 1 - below} characters, or {instead}"
    )


def require_process_groups(command: str) -> None:
    """Refuse, in one line, a command that needs process groups and POSIX signals on a
    platform without them (Windows): ``command`` is what the user ran."""
    if not _POSIX:
        raise UsageError(
            f"{command} is not supported on {sys.platform}: it ends each run with everything "
            "it started through POSIX process groups and signals; run it under WSL (a single "
            "task or pipeline run works natively)"
        )


_POSIX = os.name == "posix"


def _writable_folder(path: str) -> bool:
    return os.path.isdir(path) and os.access(path, os.W_OK | os.X_OK)
