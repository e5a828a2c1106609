"""Serving: uvicorn listening, and on SIGTERM or Ctrl-C the runs drained before it stops.

uvicorn's own signal handling would stop listening at once and raise the signal again after
the shutdown (ending the process by it); here the first signal drains the service (no new
runs, queued ones interrupted, running ones given the grace period, every stream closed with
its final event) and only then stops the server. A second signal stops at once.

The service's own temporary folders (the fork server's socket folder) go in a scratch folder
of its process, removed when it exits and swept by the next start if it was killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing.util
import signal
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import uvicorn

from phasegate._files.scratch import make_scratch, remove_scratch, sweep_dead
from phasegate._server.service import RunService
from phasegate.errors import UsageError

SERVICE_SCRATCH = "phasegate-serve"
"""The prefix of a service process's scratch folder (:mod:`phasegate._files.scratch`)."""


def service_scratch() -> Path:
    """Sweep the scratch folders of services that were killed, and make this process's:
    every temporary folder it makes from now on goes there (``tempfile.tempdir``).

    Removed at exit after multiprocessing's own clean-up (its ``pymp-`` folder, priority
    -100), which would fail on a folder already gone.
    """
    sweep_dead(SERVICE_SCRATCH)
    folder = make_scratch(SERVICE_SCRATCH)
    tempfile.tempdir = str(folder)
    multiprocessing.util.Finalize(None, remove_scratch, args=(folder,), exitpriority=-200)
    return folder


class DrainingServer:
    """uvicorn serving ``config``'s app, with ``service`` drained before it stops."""

    def __init__(self, config: uvicorn.Config, service: RunService) -> None:
        self.server = _QuietSignals(config)
        self.service = service
        self._draining: asyncio.Task[None] | None = None

    async def serve(self, say: Callable[[str], None]) -> None:
        """Serve until a signal, drain, stop."""
        loop = asyncio.get_running_loop()
        for number in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(number, self._on_signal)
        serving = asyncio.create_task(self._serve())
        while not self.server.started and not serving.done():
            await asyncio.sleep(0.02)
        if serving.done() and not serving.result():
            raise UsageError("the service could not start listening (is the port in use?)")
        for listener in self.server.servers:
            for sock in listener.sockets:
                address, bound = sock.getsockname()[:2]
                shown = f"[{address}]" if ":" in address else address
                say(f"listening on http://{shown}:{bound}")
        await serving
        if self._draining is None:
            await self.service.drain()

    async def _serve(self) -> bool:
        """uvicorn's serving; False when it could not start (it exits on a failed bind)."""
        try:
            await self.server.serve()
        except SystemExit:
            return False
        return True

    def _on_signal(self) -> None:
        if self._draining is None:
            self._draining = asyncio.get_running_loop().create_task(self._drain())
        else:
            self.server.force_exit = True
            self.server.should_exit = True

    async def _drain(self) -> None:
        await self.service.drain()
        self.server.should_exit = True


class _QuietSignals(uvicorn.Server):
    """uvicorn without its signal handlers: the draining server has its own."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield
