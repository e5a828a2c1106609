"""Mergeable statistics with bounded memory: counters, sums and a log-bucket histogram.

Everything here can be merged with :func:`merge` (for coarser groupings) and uses memory
that does not grow with the number of runs, so a report over a million events stays flat.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import TypeVar

_GROWTH = 1.05
"""Bucket width ratio: quantiles are exact to within 5 %."""
_LOG_GROWTH = math.log(_GROWTH)


@dataclass(slots=True)
class Histogram:
    """Non-negative values in logarithmic buckets (bucket 0 holds values below 1)."""

    buckets: dict[int, int] = field(default_factory=dict)
    count: int = 0

    def add(self, value: float) -> None:
        """Count one value."""
        bucket = 0 if value < 1 else 1 + int(math.log(value) / _LOG_GROWTH)
        self.buckets[bucket] = self.buckets.get(bucket, 0) + 1
        self.count += 1

    def quantile(self, q: float) -> float | None:
        """The value below which a share ``q`` of the values lie (None when empty)."""
        if self.count == 0:
            return None
        rank = max(1, math.ceil(q * self.count))
        seen = 0
        for bucket in sorted(self.buckets):
            seen += self.buckets[bucket]
            if seen >= rank:
                return round(_middle(bucket), 1)
        return None  # pragma: no cover - rank never exceeds count

    def bins(self, edges: list[float]) -> list[int]:
        """Counts between consecutive ``edges`` (for charts); values past the last edge go
        into the last bin."""
        counts = [0] * (len(edges) - 1)
        for bucket, count in self.buckets.items():
            value = _middle(bucket)
            index = next((i for i in range(len(edges) - 1) if value < edges[i + 1]), -1)
            counts[index] += count
        return counts


def _middle(bucket: int) -> float:
    """The value a bucket stands for: its geometric middle (0 for bucket 0)."""
    return 0.0 if bucket == 0 else _GROWTH ** (bucket - 0.5)


Stats = TypeVar("Stats", Histogram, "PhaseStats", "RunStats")


@dataclass(slots=True)
class Outcomes:
    """What phases and runs both count: how many ended, how many were accepted (at once),
    the gate checks they took, failed tool calls, tokens and cost (and how many of them
    recorded a cost at all, since an unknown cost is not a cost of zero)."""

    runs: int = 0
    accepted: int = 0
    first_attempt: int = 0
    attempts: int = 0
    tool_errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    costed: int = 0


@dataclass(slots=True)
class PhaseStats(Outcomes):
    """One phase of one task in one mode, over many runs."""

    to_completion_ms: Histogram = field(default_factory=Histogram)


@dataclass(slots=True)
class RunStats(Outcomes):
    """Whole runs of one task in one mode."""

    errors: int = 0
    mismatched: int = 0
    duration_ms: Histogram = field(default_factory=Histogram)
    attempts_histogram: dict[int, int] = field(default_factory=dict)


def merge(into: Stats, other: Stats) -> None:
    """Add ``other``'s counts into ``into`` (two stats of the same kind), field by field:
    numbers add up, counts by key add up, nested stats merge the same way."""
    for item in fields(into):
        mine, theirs = getattr(into, item.name), getattr(other, item.name)
        if isinstance(mine, Histogram):
            merge(mine, theirs)
        elif isinstance(mine, dict):
            for key, count in theirs.items():
                mine[key] = mine.get(key, 0) + count
        else:
            setattr(into, item.name, mine + theirs)
