"""Serving: uvicorn listening, and on SIGTERM or Ctrl-C the runs drained before it stops.

uvicorn's own signal handling would stop listening at once and raise the signal again after
the shutdown (ending the process by it); here the first signal drains the service (no new
runs, queued ones interrupted, running ones given the grace period, every stream closed with
its final event) and only then stops the server. A second signal stops at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Iterator

import uvicorn

from phasegate._server.service import RunService
from phasegate.errors import UsageError


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
