"""Run processes: forked from a process that has already imported everything.

Starting Python and importing phasegate and the agent's SDK costs a second of CPU; a run
forked from multiprocessing's fork server, which imported them once, starts in
milliseconds. Where there is no fork server (Windows), or ``PHASEGATE_START_METHOD=spawn``
says so, a run starts in a fresh interpreter instead (``spawn``): the same job, a second
slower (:mod:`phasegate._process.starting` decides). Each run still gets a process and a
session of its own: cancelling it ends its whole group (the agent's CLI and what that
started), and a crash takes only that run.
Two pipes connect a run to the service: the run rings on one after each event, and watches
the other, ending its group when the service goes away.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import multiprocessing
import multiprocessing.util
import os
import signal
import sys
import tempfile
from collections.abc import Iterator
from multiprocessing import forkserver
from multiprocessing.context import ForkServerContext, SpawnContext
from multiprocessing.process import BaseProcess

from phasegate._files.scratch import make_scratch, remove_scratch, sweep_dead
from phasegate._process.parent import kill_group
from phasegate._process.starting import (
    SHORT_FOLDERS,
    SOCKET_PATH_LIMIT,
    START_METHOD_VARIABLE,
    socket_fits,
    socket_folder_base,
    start_method,
)
from phasegate._server.event_files import Doorbell
from phasegate._server.job import RunJob
from phasegate._server.run_process import run_child
from phasegate.errors import UsageError

RunContext = ForkServerContext | SpawnContext
"""Where run processes come from: the fork server, or fresh interpreters."""

_PRELOAD = ["phasegate._server.preload"]
"""What the fork server imports once, for every run."""

SOCKET_SCRATCH = "phasegate-socket"
"""The prefix of the short folder the fork server's socket goes in when the temporary folder
is too long for it (:mod:`phasegate._files.scratch`: swept by the next start if killed)."""

_SOCKET_SCRATCH_NAME = len(SOCKET_SCRATCH) + 48
"""The longest name :func:`~phasegate._files.scratch.make_scratch` gives such a folder."""

_LISTENER = len("/listener-12345678")


def run_context() -> RunContext:
    """The context run processes start from: the fork server, started now (its imports take
    a second, once), or ``spawn``'s."""
    _main_as_module()
    if start_method() == "spawn":
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(_PRELOAD)
    with _socket_room():
        forkserver.ensure_running()
    return context


@contextlib.contextmanager
def _socket_room() -> Iterator[None]:
    """While the fork server starts, a temporary folder short enough for its socket: the
    temporary folder itself when it is, else a folder of this process in a short system
    folder (removed at exit, after multiprocessing's own ``pymp-`` folder in it)."""
    if socket_fits(tempfile.gettempdir()):
        yield
    else:
        base = socket_folder_base(_SOCKET_SCRATCH_NAME)
        sweep_dead(SOCKET_SCRATCH, root=base)
        folder = make_scratch(SOCKET_SCRATCH, root=base)
        multiprocessing.util.Finalize(None, remove_scratch, args=(folder,), exitpriority=-200)
        saved = tempfile.tempdir
        tempfile.tempdir = str(folder)
        try:
            yield
        finally:
            tempfile.tempdir = saved
    # multiprocessing keeps the first folder it made: one made earlier may still be long.
    used = multiprocessing.util.get_temp_dir()
    if not socket_fits(used, _LISTENER):
        raise UsageError(
            f"the fork server's socket would be in {used}, too long for this system's "
            f"{SOCKET_PATH_LIMIT - 1}-byte limit on a socket's path: set TMPDIR to a short "
            f"folder ({' or '.join(SHORT_FOLDERS[:1])}) or {START_METHOD_VARIABLE}=spawn"
        )


def _main_as_module() -> None:
    """Name the main module as ``python -m phasegate`` names it. A child of the fork server
    or of ``spawn`` runs the main *script* again before its target (the ``phasegate``
    console script: the whole command line, a quarter of a second per run; an interactive
    main: an error), but never a main module."""
    main = sys.modules["__main__"]
    if getattr(main, "__spec__", None) is None:
        main.__spec__ = importlib.util.find_spec("phasegate.__main__")


class RunProcess:
    """One run's process: started with its job, its doorbell, how it is stopped."""

    def __init__(self, context: RunContext, job: RunJob, bell: Doorbell) -> None:
        self.bell = bell
        self.told: str | None = None
        """What the run said about how it ended (a report or error file it could not write),
        over the doorbell: none of it needs the disk."""
        self._bell_in, bell_out = context.Pipe(duplex=False)
        alive_in, self._alive_out = context.Pipe(duplex=False)
        self.process: BaseProcess = context.Process(
            target=run_child, args=(job, bell_out, alive_in), name=f"phasegate-run-{job.run_id}"
        )
        self.process.start()
        bell_out.close()
        alive_in.close()
        loop = asyncio.get_running_loop()
        self._ended: asyncio.Future[None] = loop.create_future()
        loop.add_reader(self.process.sentinel, _settle, self._ended)

    @property
    def pid(self) -> int:
        """The process id, which also names its process group."""
        assert self.process.pid is not None
        return self.process.pid

    async def wait(self) -> int:
        """Wait for the process to end (ringing the doorbell for each of its events); its exit
        code. Whatever the run started and left behind is ended with it."""
        loop = asyncio.get_running_loop()
        loop.add_reader(self._bell_in.fileno(), self._ring, loop)
        try:
            await self._ended
        finally:
            loop.remove_reader(self.process.sentinel)
            loop.remove_reader(self._bell_in.fileno())
            self.process.join()
            self._drain()
            self._bell_in.close()
            self._alive_out.close()
            kill_group(self.pid)
        code = self.process.exitcode
        return code if code is not None else -1

    def stop(self) -> None:
        """Ask the run to stop as its timeout would (its report still comes)."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGTERM)

    async def end(self, grace: float) -> None:
        """Stop the run and give it ``grace`` seconds before its whole group is killed."""
        self.stop()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._ended), grace)
        self.kill()

    def kill(self) -> None:
        """End the run's whole group at once: a pipeline's state stays resumable."""
        kill_group(self.pid)
        # Just after the fork the run has no group of its own yet: it is its only process.
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)

    def _ring(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._drain():
            self.bell.ring()
        else:  # the run closed its end: nothing more will come
            loop.remove_reader(self._bell_in.fileno())

    def _drain(self) -> bool:
        """Read every ring waiting; False once the pipe is closed and empty."""
        try:
            while self._bell_in.poll():
                if words := self._bell_in.recv_bytes():
                    self.told = words.decode("utf-8", errors="replace")
        except (EOFError, OSError):
            return False
        return True


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
