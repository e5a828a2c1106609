"""The batch runner: which units run, how many at once, where results go, when to stop.

Each call of :meth:`BatchRunner.run` on an output directory picks up where the last one
ended: finished units are skipped (with ``retry_failed``, units that ended rejected or in
error run again; accepted ones never do). At most ``concurrency`` units are in flight.
Scheduling stops when the cost spent reaches ``max_cost``, when :meth:`BatchRunner.stop` is
called (a signal handler's job), or when the executor fails; running units then finish, or
are cancelled once ``grace`` seconds have passed, and every finished result stays.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from pathlib import Path

from phasegate.errors import UsageError
from phasegate.sdk.batches.agents import ClaudeAgents
from phasegate.sdk.batches.executor import Executor, ExecutorError
from phasegate.sdk.batches.loading import Batch
from phasegate.sdk.batches.local import LocalExecutor
from phasegate.sdk.batches.outcome import AgentFactory, UnitOutcome
from phasegate.sdk.batches.progress import BatchCounts, BatchSink, BatchUpdate, counted
from phasegate.sdk.batches.results import ResultStore
from phasegate.sdk.batches.units import Unit


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
        self._stop: asyncio.Event | None = None
        self._stops = 0

    def stop(self) -> None:
        """Start no more units; a second call cancels running units at once. Safe to call
        from a signal handler on the running loop."""
        self._stops += 1
        if self._stop is not None:
            self._stop.set()

    async def run(
        self, batch: Batch, out: str | Path, *, shard: tuple[int, int] | None = None
    ) -> BatchSummary:
        """Run the units of ``batch`` (of shard ``(index, count)``) into ``out``."""
        units = batch.units if shard is None else batch.shard(*shard)
        label = f"{shard[0]}/{shard[1]}" if shard else None
        store = ResultStore(out)
        self._stop, self._stops = asyncio.Event(), 0
        with store.locked():
            store.write_manifest(name=batch.name, file=batch.path, shard=label,
                                 total=len(batch.units), units=units)  # fmt: skip
            verdicts = store.verdicts()
            todo = [u for u in units if self._should_run(verdicts.get(u.id))]
            skipped = tuple(u.id for u in units if not self._should_run(verdicts.get(u.id)))
            counts = BatchCounts(total=len(units), skipped=len(skipped), to_run=len(todo))
            self._emit(BatchUpdate("planned", counts))
            run = _Scheduling(self, batch, store, counts)
            try:
                await run.all(todo)
            finally:
                self._stop = None
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


class _Scheduling:
    """One run's loop: start units up to the concurrency, collect them, stop when told."""

    def __init__(self, owner: BatchRunner, batch: Batch, store: ResultStore, counts: BatchCounts):
        self.owner, self.batch, self.store, self.counts = owner, batch, store, counts
        self.running: dict[asyncio.Task[UnitOutcome], Unit] = {}
        self.ran: list[str] = []
        self.model_requests: int | None = None
        self.stopped: str | None = None
        self.failure: BaseException | None = None

    async def all(self, todo: list[Unit]) -> None:
        pending = list(reversed(todo))
        stop = self.owner._stop
        assert stop is not None
        waiter = asyncio.ensure_future(stop.wait())
        deadline: float | None = None
        try:
            while pending or self.running:
                if stop.is_set() and self.stopped is None:
                    self._stopping("stopped")
                while (
                    pending and self.stopped is None and len(self.running) < self.owner.concurrency
                ):
                    self._start(pending.pop())
                if not self.running:
                    break
                if stop.is_set() and deadline is None:  # asked to stop: running units get grace
                    deadline = asyncio.get_running_loop().time() + self.owner.grace
                timeout = None if deadline is None else deadline - asyncio.get_running_loop().time()
                if self.owner._stops > 1 or (timeout is not None and timeout <= 0):
                    await self._cancel_running()
                    break
                watched = {*self.running, *(() if stop.is_set() else (waiter,))}
                finished, _ = await asyncio.wait(
                    watched, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
                )
                for task in finished - {waiter}:
                    self._collect(task)
        finally:
            waiter.cancel()
            await self._cancel_running()
        if self.failure is not None:
            raise self.failure

    def _start(self, unit: Unit) -> None:
        job = self.batch.job(unit, self.owner.agents)
        self.running[asyncio.ensure_future(self.owner.executor.run(job))] = unit
        self.counts = replace(self.counts, running=self.counts.running + 1)
        self.owner._emit(BatchUpdate("started", self.counts, unit=unit))

    def _collect(self, task: asyncio.Task[UnitOutcome]) -> None:
        unit = self.running.pop(task)
        try:
            outcome = task.result()
        except ExecutorError as exc:
            self.counts = replace(self.counts, running=self.counts.running - 1)
            self._stopping(str(exc))
            return
        except Exception as exc:  # a bug below: stop starting units, raise once drained
            self.counts = replace(self.counts, running=self.counts.running - 1)
            self.failure = self.failure or exc
            self._stopping(f"{unit.id} failed: {exc}")
            return
        stop = self.owner._stop
        if outcome.verdict == "error" and stop is not None and stop.is_set():
            # A Ctrl-C reaches the agent's CLI too (same process group) and ends it in error:
            # such a result says nothing about the unit, which runs again next time.
            self.counts = replace(self.counts, running=self.counts.running - 1)
            return
        self.store.write(outcome)
        self.ran.append(unit.id)
        if outcome.model_requests is not None:
            self.model_requests = (self.model_requests or 0) + outcome.model_requests
        self.counts = counted(self.counts, outcome)
        self.owner._emit(BatchUpdate("finished", self.counts, unit=unit, outcome=outcome))
        cap = self.owner.max_cost
        if cap is not None and self.counts.cost_usd >= cap and self.stopped is None:
            self._stopping("max_cost")

    def _stopping(self, reason: str) -> None:
        if self.stopped is None:
            self.stopped = reason
            self.owner._emit(BatchUpdate("stopping", self.counts, reason=reason))

    async def _cancel_running(self) -> None:
        """Cancel what runs; a unit that finished meanwhile still gets its result written."""
        for task in self.running:
            task.cancel()
        await asyncio.gather(*self.running, return_exceptions=True)
        for task in list(self.running):
            if not task.cancelled() and task.exception() is None:
                self._collect(task)
            else:
                self.running.pop(task)
                self.counts = replace(self.counts, running=self.counts.running - 1)
