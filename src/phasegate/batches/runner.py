"""The batch runner: which units run, how many at once, where results go, when to stop.

Each call of :meth:`BatchRunner.run` on an output directory picks up where the last one
ended: finished units are skipped (with ``retry_failed``, units that ended rejected or in
error run again; accepted ones never do). At most ``concurrency`` units are in flight.
Scheduling stops when the cost spent reaches ``max_cost``, when :meth:`BatchRunner.stop` is
called (a signal handler's job), or when the executor fails; running units then finish, or
are cancelled once ``grace`` seconds have passed, and every finished result stays. As it
starts, it removes the temporary folders that units of a dead batch left
(:func:`sweep_leftovers`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from phasegate._files.scratch import sweep_dead
from phasegate.agents.scripted.model_server import HOME_SCRATCH
from phasegate.batches.agents import ClaudeAgents
from phasegate.batches.executor import Executor
from phasegate.batches.loading import Batch
from phasegate.batches.local import OUTCOME_SCRATCH, LocalExecutor
from phasegate.batches.outcome import AgentFactory
from phasegate.batches.progress import BatchCounts, BatchSink, BatchUpdate
from phasegate.batches.results import ResultStore
from phasegate.batches.scheduling import Limits, Scheduling
from phasegate.batches.unit_run import UNIT_SCRATCH
from phasegate.errors import UsageError
from phasegate.workspace.revert import BACKUP_SCRATCH


@dataclass(frozen=True, slots=True)
class BatchSummary:
    """How one batch run ended."""

    out: Path
    shard: str | None
    counts: BatchCounts
    ran: tuple[str, ...]
    """Ids of the units this run finished."""
    skipped: tuple[str, ...]
    """Ids of the units finished before it."""
    unfinished: tuple[str, ...]
    """Ids of the units still without a (new) result."""
    model_requests: int | None
    """Requests the offline scripted models answered (None when no unit used one)."""
    stopped: str | None
    """Why scheduling stopped early: ``max_cost``, ``stopped``, or the executor's error."""

    @property
    def complete(self) -> bool:
        """Every unit of this run has a result."""
        return not self.unfinished


SWEPT_PREFIXES = (UNIT_SCRATCH, OUTCOME_SCRATCH, HOME_SCRATCH, BACKUP_SCRATCH)
"""The temporary folders a unit makes, each holding a copy of a work directory, a home or an
outcome: what a unit process killed with SIGKILL leaves behind."""


def sweep_leftovers() -> list[Path]:
    """Remove the temporary folders of units whose process is dead (on this machine), and
    return them: what an earlier batch killed with SIGKILL left."""
    return [path for prefix in SWEPT_PREFIXES for path in sweep_dead(prefix)]


class BatchRunner:
    """Runs batches on an executor (default: this process)."""

    def __init__(
        self,
        executor: Executor | None = None,
        *,
        agents: AgentFactory | None = None,
        concurrency: int | None = None,
        max_cost: float | None = None,
        retry_failed: bool = False,
        grace: float = 30.0,
        on_update: BatchSink | None = None,
    ) -> None:
        if concurrency is not None and concurrency < 1:
            raise UsageError(f"concurrency must be at least 1, got {concurrency}",
                             option="concurrency")  # fmt: skip
        self.executor: Executor = executor or LocalExecutor()
        self.agents: AgentFactory = agents or ClaudeAgents()
        self.concurrency = concurrency or self.executor.default_concurrency()
        self.max_cost = max_cost
        self.retry_failed = retry_failed
        self.grace = grace
        self.on_update = on_update
        self._current: Scheduling | None = None
        self.swept: list[Path] = []
        """The temporary folders of dead runs the last :meth:`run` removed as it started."""

    def stop(self) -> None:
        """Start no more units; a second call cancels running units at once. Safe to call
        from a signal handler on the running loop."""
        if self._current is not None:
            self._current.stop()

    async def run(
        self, batch: Batch, out: str | Path, *, shard: tuple[int, int] | None = None
    ) -> BatchSummary:
        """Run the units of ``batch`` (of shard ``(index, count)``) into ``out``."""
        units = batch.units if shard is None else batch.shard(*shard)
        label = f"{shard[0]}/{shard[1]}" if shard else None
        store = ResultStore(out)
        with store.locked():
            self.swept = sweep_leftovers()
            store.write_manifest(name=batch.name, file=batch.path, shard=label,
                                 total=len(batch.units), units=units)  # fmt: skip
            verdicts = store.verdicts()
            todo = [u for u in units if self._should_run(verdicts.get(u.id))]
            skipped = tuple(u.id for u in units if not self._should_run(verdicts.get(u.id)))
            counts = BatchCounts(total=len(units), skipped=len(skipped), to_run=len(todo))
            self._emit(BatchUpdate("planned", counts))
            limits = Limits(self.executor, self.agents, self.concurrency, self.grace,
                            self.max_cost, self._emit)  # fmt: skip
            run = self._current = Scheduling(limits, batch, store, counts)
            try:
                await run.all(todo)
            finally:
                self._current = None
        return BatchSummary(
            out=Path(out),
            shard=label,
            counts=run.counts,
            ran=tuple(run.ran),
            skipped=skipped,
            unfinished=tuple(u.id for u in todo if u.id not in run.ran),
            model_requests=run.model_requests,
            stopped=run.stopped,
        )

    def run_sync(
        self, batch: Batch, out: str | Path, *, shard: tuple[int, int] | None = None
    ) -> BatchSummary:
        """:meth:`run` for code that is not async."""
        return asyncio.run(self.run(batch, out, shard=shard))

    def _should_run(self, verdict: str | None) -> bool:
        return verdict is None or (self.retry_failed and verdict != "accepted")

    def _emit(self, update: BatchUpdate) -> None:
        if self.on_update is not None:
            self.on_update(update)
