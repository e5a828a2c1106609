"""Run processes: forked from a process that has already imported everything.

Starting Python and importing phasegate and the agent's SDK costs a second of CPU; a run
forked from multiprocessing's fork server, which imported them once, starts in
milliseconds. Each run still gets a process and a session of its own: cancelling it ends
its whole group (the agent's CLI and what that started), and a crash takes only that run.
Two pipes connect a run to the service: the run rings on one after each event, and watches
the other, ending its group when the service goes away.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import multiprocessing
import os
import signal
import sys
from multiprocessing import forkserver
from multiprocessing.context import ForkServerContext
from multiprocessing.process import BaseProcess

from phasegate._process.parent import kill_group
from phasegate._server.event_files import Doorbell
from phasegate._server.job import RunJob
from phasegate._server.run_process import run_child

_PRELOAD = ["phasegate._server.preload"]
"""What the fork server imports once, for every run."""


def fork_server() -> ForkServerContext:
    """The fork server's context, started now (its imports take a second, once)."""
    _main_as_module()
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(_PRELOAD)
    forkserver.ensure_running()
    return context


def _main_as_module() -> None:
    """Name the main module as ``python -m phasegate`` names it. A child of the fork server
    runs the main *script* again before its target (the ``phasegate`` console script: the
    whole command line, a quarter of a second per run; an interactive main: an error), but
    never a main module."""
    main = sys.modules["__main__"]
    if getattr(main, "__spec__", None) is None:
        main.__spec__ = importlib.util.find_spec("phasegate.__main__")


class RunProcess:
    """One run's process: started with its job, its doorbell, how it is stopped."""

    def __init__(self, context: ForkServerContext, job: RunJob, bell: Doorbell) -> None:
        self.bell = bell
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
                self._bell_in.recv_bytes()
        except (EOFError, OSError):
            return False
        return True


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
