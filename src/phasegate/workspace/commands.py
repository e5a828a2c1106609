"""Running one check command: never through a shell, its output kept to a bounded tail, and
everything it started killed when it runs too long.

A check's command is the user's (a test suite, a linter), run by the gate on the agent's
work, so it may print without end or start processes that outlive it. Its combined stdout and
stderr are read as they come by a thread of their own, keeping only the last
:data:`TAIL_BYTES` (a check's detail shows at most the last 40 lines and 2000 characters:
:func:`~phasegate.validators.stage_checks.output_tail`): a command printing gigabytes costs
no more memory than one printing a line. It starts a session of its own, so past its timeout
its whole process group is killed (a test runner's workers go with it), and what it left
running in that group when it exits is killed then. Only a process that made a session of
its own escapes this, unless the command is confined, where nothing does.

Confined (:mod:`phasegate.workspace.command_sandbox`), the command line run is bubblewrap's,
and the program it is to start is looked up first (:func:`find_program`), so a missing one
is said as plainly as unconfined.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Literal

from phasegate.validators.stage_checks import CommandOutcome, output_tail

TAIL_BYTES = 16 * 1024
"""How much of the end of a command's output is kept: more than the 2000 characters of a
check's detail take even when each is 4 bytes of UTF-8 (or undecodable), so the detail is
the same as it would be from the whole output."""
READ_BYTES = 64 * 1024
"""How much is read from the output pipe at a time."""
REAP_SECONDS = 5.0
"""How long to wait for the output pipe to close once the command's process group is killed
(a process that left the group may still hold it: then what arrived is kept)."""


class OutputTail:
    """The end of a stream of bytes, bounded: the last ``limit`` bytes that a check's detail
    can show.

    Whitespace at the very end is kept apart (a detail strips it), so a command that prints
    its error and then floods blank lines still shows its error, as it would from the whole
    output."""

    def __init__(self, limit: int = TAIL_BYTES) -> None:
        self.limit = limit
        self._body = bytearray()
        """The kept end of the output up to its last byte that is not whitespace."""
        self._blank = bytearray()
        """The whitespace since then (its end, bounded too)."""
        self._cut = False
        """Whether output before :attr:`_body` was dropped."""
        self._blank_cut = False
        """Whether whitespace before :attr:`_blank` was dropped."""
        self._lock = threading.Lock()

    def add(self, chunk: bytes) -> None:
        """Take the next ``chunk`` of output."""
        with self._lock:
            stripped = chunk.rstrip()
            if not stripped:
                self._blank += chunk
                self._blank_cut |= _trim(self._blank, self.limit)
                return
            self._body += self._blank
            self._body += stripped
            self._cut |= self._blank_cut | _trim(self._body, self.limit)
            self._blank[:] = chunk[len(stripped) :]
            self._blank_cut = _trim(self._blank, self.limit)

    def text(self) -> str:
        """The tail as a check's detail shows it (at most its last 40 lines and 2000
        characters), with a leading ``…`` when anything before it was dropped."""
        with self._lock:
            kept = output_tail(bytes(self._body).decode("utf-8", errors="replace"))
            cut = self._cut
        return f"…{kept}" if cut and not kept.startswith("…") else kept


def _trim(buffer: bytearray, limit: int) -> bool:
    """Keep the last ``limit`` bytes of ``buffer``; whether any were dropped."""
    if len(buffer) <= limit:
        return False
    del buffer[: len(buffer) - limit]
    return True


def run_bounded(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    program: str | None = None,
    pass_fds: Sequence[int] = (),
    stop: threading.Event | None = None,
) -> CommandOutcome:
    """Run ``argv`` in ``cwd`` with exactly ``env``, stdin closed, stdout and stderr
    combined into a bounded tail; past ``timeout`` seconds its whole process group is
    killed. ``program``: the name a failure to start names (default ``argv[0]``);
    ``pass_fds``: descriptors the command inherits; ``stop``: once set (the run ended while
    the command ran), the command's group is killed at once and the outcome says so."""
    program = program if program is not None else (argv[0] if argv else "")
    try:
        # A session of its own makes the command the leader of a new process group, so a
        # timeout can kill whatever it started too (test runners fork workers).
        process = subprocess.Popen(
            list(argv),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=dict(env),
            pass_fds=tuple(pass_fds),
        )
    except FileNotFoundError:
        return not_started(f"program not found: {program} (is it installed and on PATH?)")
    except PermissionError:
        return not_started(f"not executable: {program}")
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in an argument
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return not_started(f"cannot run {program}: {reason}")
    assert process.stdout is not None
    tail = OutputTail()
    reader = threading.Thread(
        target=_read_all, args=(process.stdout, tail), name="check-output", daemon=True
    )
    reader.start()
    try:
        ended = _wait(process, timeout, stop)
    except BaseException:
        _end(process, reader)  # interrupted (Ctrl-C, shutdown): do not leave it running
        raise
    _end(process, reader)
    if ended == "timed_out":
        return CommandOutcome(exit_code=None, output=tail.text(), timed_out=True)
    if ended == "stopped":
        return CommandOutcome(
            exit_code=None, output=tail.text(), error="stopped: the run ended while it ran"
        )
    return CommandOutcome(exit_code=process.returncode, output=tail.text())


_STOP_POLL_SECONDS = 0.1
"""How often a command with a ``stop`` signal looks at it while it waits."""


def _wait(
    process: subprocess.Popen[bytes], timeout: float, stop: threading.Event | None
) -> Literal["exited", "timed_out", "stopped"]:
    """Wait for ``process`` to exit within ``timeout`` seconds, or until ``stop`` is set."""
    if stop is None:
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return "timed_out"
        return "exited"
    deadline = time.monotonic() + timeout
    while not stop.is_set():
        left = deadline - time.monotonic()
        if left <= 0:
            return "timed_out"
        try:
            process.wait(timeout=min(left, _STOP_POLL_SECONDS))
        except subprocess.TimeoutExpired:
            continue
        return "exited"
    return "stopped"


def _read_all(stream: IO[bytes], tail: OutputTail) -> None:
    """Read ``stream`` to its end into ``tail``, then close it."""
    try:
        with stream:
            fd = stream.fileno()
            while chunk := os.read(fd, READ_BYTES):
                tail.add(chunk)
    except (OSError, ValueError):  # closed under us: nothing more to read
        return


def _end(process: subprocess.Popen[bytes], reader: threading.Thread) -> None:
    """Kill what is left of the command's process group (all of it past its timeout; what
    it left running once it exited), read what they wrote, and reap it. A process that left
    the group (a session of its own) may still hold the pipe: after :data:`REAP_SECONDS`
    what arrived is the output, and the reading thread ends when that process does."""
    _kill_group(process)
    reader.join(REAP_SECONDS)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=REAP_SECONDS)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill ``process`` and everything in its process group."""
    if os.name == "posix":
        with contextlib.suppress(ProcessLookupError, PermissionError):  # already gone
            os.killpg(process.pid, signal.SIGKILL)
    else:  # pragma: no cover - no process groups: the command alone
        with contextlib.suppress(OSError):
            process.kill()


def find_program(program: str, *, cwd: Path, env: Mapping[str, str]) -> str | None:
    """Why ``program`` could not be started in ``cwd`` with ``env``'s ``PATH`` (as
    :func:`run_bounded` says it), or None when it can: a path with a slash is taken from
    ``cwd``, a bare name is looked up on ``PATH``."""
    if not program:
        return "cannot run : no program"
    if "\0" in program:
        return f"cannot run {program}: embedded null byte"
    if os.sep in program or (os.altsep is not None and os.altsep in program):
        path = cwd / program
        if not path.exists():
            return f"program not found: {program} (is it installed and on PATH?)"
        if path.is_dir() or not os.access(path, os.X_OK):
            return f"not executable: {program}"
        return None
    if shutil.which(program, path=env.get("PATH", os.defpath)) is None:
        return f"program not found: {program} (is it installed and on PATH?)"
    return None


def not_started(error: str) -> CommandOutcome:
    """The outcome of a command that could not start, and why."""
    return CommandOutcome(exit_code=None, output="", error=error)
