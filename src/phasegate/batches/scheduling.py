"""One batch run's loop, as a small state machine.

``scheduling``: units start while fewer than ``concurrency`` run. ``draining``: no unit
starts; running ones finish (entered when the cost cap is reached, the executor fails, a
result cannot be written, or a stop is asked for; after a stop, the running units get
``grace`` seconds). ``cancelling``:
running units are cancelled (a second stop, or the grace is over); their results are not
written, so they run again next time. The loop ends when nothing runs and nothing may start.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from phasegate.errors import PhasegateError
from phasegate.batches.executor import Executor, ExecutorError
from phasegate.batches.outcome import AgentFactory, UnitOutcome
from phasegate.batches.progress import BatchCounts, BatchUpdate, counted
from phasegate.batches.results import ResultStore
from phasegate.batches.units import Unit

if TYPE_CHECKING:
    from phasegate.batches.loading import Batch


@dataclass(frozen=True, slots=True)
class Limits:
    """What a run may use: where units run, with what agent, how many at once, how long
    after a stop, and how much money."""

    executor: Executor
    agents: AgentFactory
    concurrency: int
    grace: float
    max_cost: float | None
    emit: Callable[[BatchUpdate], None]


State = Literal["scheduling", "draining", "cancelling"]
"""Where a batch run's loop stands."""


class Scheduling:
    """Runs units of ``batch`` within ``limits`` and writes their results to ``store``."""

    def __init__(self, limits: Limits, batch: Batch, store: ResultStore, counts: BatchCounts):
        self.limits, self.batch, self.store, self.counts = limits, batch, store, counts
        self.state: State = "scheduling"
        self.running: dict[asyncio.Task[UnitOutcome], Unit] = {}
        self.ran: list[str] = []
        self.model_requests: int | None = None
        self.stopped: str | None = None
        """Why the run left ``scheduling`` early."""
        self._asked = asyncio.Event()
        self._deadline: float | None = None
        self._failure: BaseException | None = None

    def stop(self) -> None:
        """Asked to stop: drain with grace; asked again, cancel."""
        if self._asked.is_set():
            self._move("cancelling", "stopped")
        self._asked.set()

    async def all(self, todo: list[Unit]) -> None:
        """Run until every unit ran, or the state machine says to end."""
        pending = deque(todo)
        asked = asyncio.ensure_future(self._asked.wait())
        try:
            while self.state != "cancelling":
                if self._asked.is_set() and self._deadline is None:
                    self._move("draining", "stopped")
                    self._deadline = self._now() + self.limits.grace
                while self.state == "scheduling" and pending and self._room():
                    self._start(pending.popleft())
                if not self.running:
                    break
                left = None if self._deadline is None else self._deadline - self._now()
                if left is not None and left <= 0:
                    self._move("cancelling", "stopped")
                    break
                watched = {*self.running, *(() if asked.done() else (asked,))}
                done, _ = await asyncio.wait(watched, timeout=left, return_when="FIRST_COMPLETED")
                for task in done - {asked}:
                    self._collect(task)
        finally:
            asked.cancel()
            await self._cancel_running()
        if self._failure is not None:
            raise self._failure

    def _move(self, state: State, reason: str) -> None:
        if self.stopped is None:
            self.stopped = reason
            self.limits.emit(BatchUpdate("stopping", self.counts, reason=reason))
        if state == "cancelling" or self.state == "scheduling":
            self.state = state

    def _room(self) -> bool:
        return len(self.running) < self.limits.concurrency

    def _now(self) -> float:
        return asyncio.get_running_loop().time()

    def _start(self, unit: Unit) -> None:
        job = self.batch.job(unit, self.limits.agents)
        self.running[asyncio.ensure_future(self.limits.executor.run(job))] = unit
        self._count(lambda counts: replace(counts, running=counts.running + 1))
        self.limits.emit(BatchUpdate("started", self.counts, unit=unit))

    def _collect(self, task: asyncio.Task[UnitOutcome]) -> None:
        unit = self.running.pop(task)
        try:
            outcome = task.result()
        except ExecutorError as exc:
            self._unit_gone()
            self._move("draining", str(exc))
            return
        except Exception as exc:  # a bug below: start nothing more, raise once drained
            self._unit_gone()
            self._failure = self._failure or exc
            self._move("draining", f"{unit.id} failed: {exc}")
            return
        if outcome.verdict == "error" and self._asked.is_set():
            # A stop may itself have broken the unit (a signal that reached its agent, a
            # worker cancelled): such a result says nothing about it; it runs again next time.
            self._unit_gone()
            return
        try:
            self.store.write(outcome)
        except PhasegateError as exc:  # a full disk, a read-only folder: no unit can be kept
            self._unit_gone()
            self._move("draining", str(exc))
            return
        self.ran.append(unit.id)
        if outcome.model_requests is not None:
            self.model_requests = (self.model_requests or 0) + outcome.model_requests
        self._count(lambda counts: counted(counts, outcome))
        self.limits.emit(BatchUpdate("finished", self.counts, unit=unit, outcome=outcome))
        cap = self.limits.max_cost
        if cap is not None and self.counts.cost_usd >= cap:
            self._move("draining", "max_cost")

    def _unit_gone(self) -> None:
        self._count(lambda counts: replace(counts, running=counts.running - 1))

    def _count(self, change: Callable[[BatchCounts], BatchCounts]) -> None:
        self.counts = change(self.counts)

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
                self._unit_gone()
