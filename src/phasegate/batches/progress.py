"""What a batch run tells as it goes: one update per unit started, finished or skipped."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Literal

from phasegate.batches.outcome import UnitOutcome
from phasegate.batches.units import Unit

UpdateKind = Literal["planned", "started", "finished", "stopping"]
"""``planned``: the units are known (counts only); ``started``/``finished``: a unit;
``stopping``: no new unit starts (a stop was asked for, or the cost cap was reached)."""


@dataclass(frozen=True, slots=True)
class BatchCounts:
    """Where a batch run stands."""

    total: int = 0
    """Units of this run (this shard), finished ones from earlier runs included."""
    skipped: int = 0
    """Units already finished before this run."""
    to_run: int = 0
    done: int = 0
    running: int = 0
    accepted: int = 0
    rejected: int = 0
    errors: int = 0
    cost_usd: float = 0.0
    """Cost of the units this run finished (what it spent), of those that recorded one."""
    costed: int = 0
    """Units this run finished that recorded a cost."""
    unit_ms: int = 0
    """Wall time of the units this run finished, added up."""

    @property
    def known_cost_usd(self) -> float | None:
        """:attr:`cost_usd` as a figure to show: None when units finished and none of them
        recorded a cost (unknown is not $0), 0 when none finished."""
        return None if self.done and not self.costed else self.cost_usd

    def eta_seconds(self, concurrency: int) -> float | None:
        """Seconds left at the pace so far (None before the first unit finishes)."""
        if not self.done:
            return None
        left = self.to_run - self.done
        return left * (self.unit_ms / self.done) / 1000 / max(1, min(concurrency, left or 1))


@dataclass(frozen=True, slots=True)
class BatchUpdate:
    """One step of a batch run, with the counts after it."""

    kind: UpdateKind
    counts: BatchCounts
    unit: Unit | None = None
    outcome: UnitOutcome | None = None
    reason: str | None = field(default=None)
    """Why it is stopping."""


BatchSink = Callable[[BatchUpdate], None]
"""Receives every :class:`BatchUpdate`."""


def counted(counts: BatchCounts, outcome: UnitOutcome) -> BatchCounts:
    """``counts`` with ``outcome``'s unit finished."""
    verdict = outcome.verdict
    return replace(
        counts,
        done=counts.done + 1,
        running=counts.running - 1,
        accepted=counts.accepted + (verdict == "accepted"),
        rejected=counts.rejected + (verdict == "rejected"),
        errors=counts.errors + (verdict not in ("accepted", "rejected")),
        cost_usd=counts.cost_usd + (outcome.cost_usd or 0.0),
        costed=counts.costed + (outcome.cost_usd is not None),
        unit_ms=counts.unit_ms + outcome.duration_ms,
    )
