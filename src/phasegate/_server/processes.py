"""The service's side of run processes: one kept ready, one per running run.

Python and phasegate take most of a second to start; the service starts the next run's
process while the current one runs, so a run begins the moment it has a slot.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

from phasegate._process.parent import kill_group, send_job, start_child
from phasegate._server.event_files import Doorbell
from phasegate._server.job import RunJob

_MODULE = "phasegate._server.run_process"


class ProcessPool:
    """Hands out started run processes, keeping one spare."""

    def __init__(self) -> None:
        self._spare: asyncio.Task[asyncio.subprocess.Process] | None = None

    async def take(self) -> asyncio.subprocess.Process:
        """A started process waiting for its job; a new spare starts behind it."""
        spare = self._spare or asyncio.create_task(_spawn())
        self._spare = asyncio.create_task(_spawn())
        return await spare

    async def close(self) -> None:
        """End the spare: closing its stdin before a job tells it to exit."""
        spare, self._spare = self._spare, None
        if spare is None:
            return
        process = await spare
        if process.stdin is not None:
            process.stdin.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), 5)
        kill_group(process.pid)


class RunProcess:
    """One run's process: its job, its doorbell, how it is stopped."""

    def __init__(self, process: asyncio.subprocess.Process, bell: Doorbell) -> None:
        self.process = process
        self.bell = bell

    @property
    def pid(self) -> int:
        """The process id, which also names its process group."""
        return self.process.pid

    async def run(self, job: RunJob) -> int:
        """Hand over ``job`` and wait for the process to end; its exit code. Whatever the
        run started and left behind is ended with it."""
        relay = asyncio.create_task(self._relay())
        try:
            await send_job(self.process, job)
            code = await self.process.wait()
            await relay
        finally:
            relay.cancel()
            assert self.process.stdin is not None
            self.process.stdin.close()
            kill_group(self.process.pid)
        return code

    def stop(self) -> None:
        """Ask the run to stop as its timeout would (its report still comes)."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.process.pid, signal.SIGTERM)

    async def end(self, grace: float) -> None:
        """Stop the run and give it ``grace`` seconds before its whole group is killed."""
        self.stop()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.process.wait()), grace)
        kill_group(self.process.pid)

    def kill(self) -> None:
        """End the run's whole group at once: a pipeline's state stays resumable."""
        kill_group(self.process.pid)

    async def _relay(self) -> None:
        """Ring the doorbell for every line the process writes (one per event)."""
        stdout = self.process.stdout
        assert stdout is not None
        while await stdout.readline():
            self.bell.ring()


async def _spawn() -> asyncio.subprocess.Process:
    return await start_child(_MODULE, stdout=asyncio.subprocess.PIPE)
