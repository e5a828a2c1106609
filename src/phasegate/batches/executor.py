"""Executors: the engines units run on, behind one small protocol.

The batch runner decides what runs, how many at once, and where results go; an executor only
runs one job when asked. :class:`~.local.LocalExecutor` runs each unit in a process of its
own on this machine; :mod:`.ray_executor` sends them to a Ray cluster.
"""

from __future__ import annotations

from typing import Protocol

from phasegate.errors import PhasegateError
from phasegate.batches.outcome import UnitJob, UnitOutcome


class ExecutorError(PhasegateError):
    """The engine itself failed (not a unit's run): the batch stops scheduling."""


class Executor(Protocol):
    """Runs batch units somewhere."""

    name: str
    """Its name in reports and progress: ``local``, ``ray``."""

    def default_concurrency(self) -> int:
        """How many units to keep in flight when the caller sets no number."""
        ...

    async def run(self, job: UnitJob) -> UnitOutcome:
        """Run one unit and return how it ended; cancelling the call stops the unit."""
        ...

    def close(self) -> None:
        """Release what the executor started (safe to call twice)."""
        ...
