"""Mergeable statistics with bounded memory: counters, sums and a distribution of times.

Everything here can be merged with :func:`merge` (for coarser groupings) and uses memory
that does not grow past a constant with the number of runs, so a report over a million
events stays flat.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import TypeVar

EXACT_LIMIT = 10_000
"""The most values a :class:`Distribution` keeps as they are; past it, a sketch."""
RELATIVE_ACCURACY = 0.01
"""The sketch's bound: each quantile it gives is within 1 % of the exact one."""
MAX_BUCKETS = 2048
"""The most buckets a sketch keeps: durations from 1 µs to 31 years (0.001 ms to
:data:`phasegate.metrics.fields.MAX_DURATION_MS`) need about 1,730. Past the cap the lowest
buckets are folded into the one above, as DDSketch does: only the lowest quantiles (the
shortest times) lose their bound, overstated."""
_GAMMA = (1 + RELATIVE_ACCURACY) / (1 - RELATIVE_ACCURACY)
_LOG_GAMMA = math.log(_GAMMA)
_MIDDLE = 2 / (_GAMMA + 1)
"""``2 gamma^i / (gamma + 1)`` is the value of bucket ``i`` (``(gamma^(i-1), gamma^i]``): within
:data:`RELATIVE_ACCURACY` of every value in it."""


@dataclass(slots=True)
class Distribution:
    """Non-negative values (times in ms), for their quantiles and a chart's bins.

    Up to :data:`EXACT_LIMIT` values are kept as they are, and quantiles are exact. Past that,
    once and for good, the values go into a DDSketch-style sketch (Masson, Rim and Lee, 2019):
    logarithmic buckets ``(gamma^(i-1), gamma^i]`` with ``gamma = 1.01 / 0.99``, whose
    quantiles are within 1 % of the exact ones, in memory bounded by the range of the values
    (at most :data:`MAX_BUCKETS` buckets); zeros are counted apart.

    A quantile ``q`` is the nearest-rank one, in both forms: the value at rank
    ``ceil(q · n)`` (at least 1) of the ``n`` values sorted (the sketch: that value's bucket).
    """

    values: array[float] | None = field(default_factory=lambda: array("d"))
    """The values as added, 8 bytes each (None once it is a sketch)."""
    buckets: dict[int, int] = field(default_factory=dict)
    """The sketch: values per bucket index (empty while exact)."""
    zeros: int = 0
    """The sketch's values of 0 (or below: none are expected)."""
    floor: int | None = None
    """The lowest bucket once buckets were folded (:data:`MAX_BUCKETS`): it takes every
    lower value."""
    count: int = 0
    """How many values were added, in either form."""

    @property
    def exact(self) -> bool:
        """Whether quantiles are exact (no more than :data:`EXACT_LIMIT` values so far)."""
        return self.values is not None

    def add(self, value: float) -> None:
        """Count one value."""
        self.count += 1
        values = self.values
        if values is not None:
            values.append(value)
            if len(values) > EXACT_LIMIT:
                self._to_sketch()
        else:
            self._bucket(value, 1)

    def merge(self, other: Distribution) -> None:
        """Add ``other``'s values: exact while the two together stay within the limit."""
        theirs = other.values
        if self.values is not None and theirs is not None:
            self.values.extend(theirs)
            self.count += other.count
            if len(self.values) > EXACT_LIMIT:
                self._to_sketch()
            return
        if self.values is not None:
            self._to_sketch()
        self.count += other.count
        if theirs is not None:
            for value in theirs:
                self._bucket(value, 1)
            return
        self.zeros += other.zeros
        for index, count in other.buckets.items():
            self._bucket_index(index, count)

    def quantile(self, q: float) -> float | None:
        """The nearest-rank ``q`` quantile (``0 < q <= 1``); None when there are no values.

        Exact, or within :data:`RELATIVE_ACCURACY` of the exact one when :attr:`exact` is
        false."""
        if self.count == 0:
            return None
        # round(): float noise such as 0.07 * 100 = 7.000000000000001 is not another rank.
        rank = max(1, math.ceil(round(q * self.count, 6)))
        if self.values is not None:
            return sorted(self.values)[rank - 1]
        seen = self.zeros
        if seen >= rank:
            return 0.0
        for index in sorted(self.buckets):
            seen += self.buckets[index]
            if seen >= rank:
                return _value(index)
        return None  # pragma: no cover - rank never exceeds count

    def bins(self, edges: Sequence[float]) -> list[int]:
        """Counts between consecutive ``edges`` (for charts): a value ``v`` with
        ``edges[i] <= v < edges[i + 1]`` is in bin ``i``; values before the first edge go
        into the first bin, past the last into the last. A sketch's value is its bucket's."""
        counts = [0] * (len(edges) - 1)
        last = len(counts) - 1

        def put(value: float, count: int) -> None:
            counts[min(max(bisect_right(edges, value) - 1, 0), last)] += count

        if self.values is not None:
            for value in self.values:
                put(value, 1)
        else:
            put(0.0, self.zeros)
            for index, count in self.buckets.items():
                put(_value(index), count)
        return counts

    def _to_sketch(self) -> None:
        values, self.values = self.values, None
        for value in values or ():
            self._bucket(value, 1)

    def _bucket(self, value: float, count: int) -> None:
        if value > 0:
            self._bucket_index(math.ceil(math.log(value) / _LOG_GAMMA), count)
        else:
            self.zeros += count

    def _bucket_index(self, index: int, count: int) -> None:
        buckets, floor = self.buckets, self.floor
        if floor is not None and index < floor:
            index = floor
        buckets[index] = buckets.get(index, 0) + count
        if len(buckets) > MAX_BUCKETS:
            # Fold the lowest bucket into the next one, which takes every lower value from
            # now on: memory stays bounded, and only the lowest quantiles lose their bound.
            lowest = buckets.pop(min(buckets))
            self.floor = min(buckets)
            buckets[self.floor] += lowest


def _value(index: int) -> float:
    """The value bucket ``index`` stands for."""
    return _MIDDLE * _GAMMA**index


Stats = TypeVar("Stats", "PhaseStats", "RunStats", "CheckStats")


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
    overhead: tuple[int, int, int, int] = (0, 0, 0, 0)
    """Summed ``overhead`` figures (:data:`phasegate.metrics.fields.OVERHEAD_FIGURES`)."""
    overhead_lines: int = 0
    """The lines that reported an ``overhead`` (older lines have none)."""
    refusals: int = 0
    """Tool calls refused before they ran."""
    subagent_calls: dict[str, int] = field(default_factory=dict)
    """Successful calls subagents made, by subagent type (part of the figures above)."""
    subagent_errors: dict[str, int] = field(default_factory=dict)
    """Failed calls subagents made, by subagent type."""
    grader_input_tokens: int = 0
    """Tokens and cost of the grader sessions that judged rubric checks (their lines'
    ``grader_usage``): part of ``input_tokens``, ``output_tokens`` and ``cost_usd`` of a run,
    never of a phase's (which are the agent's)."""
    grader_output_tokens: int = 0
    grader_cost_usd: float = 0.0
    grader_costed: int = 0
    """The lines whose ``grader_usage`` recorded a cost."""


@dataclass(slots=True)
class PhaseStats(Outcomes):
    """One phase of one task in one mode, over many runs."""

    to_completion_ms: Distribution = field(default_factory=Distribution)


@dataclass(slots=True)
class RunStats(Outcomes):
    """Whole runs of one task in one mode."""

    errors: int = 0
    blocked: int = 0
    """Attempts to leave the sandbox it blocked (docs/sandbox.md)."""
    reconciled: int = 0
    """Runs whose closing line says whether claims, tools and disk agreed (task runs; a
    pipeline makes no such claims): the runs ``mismatched`` is a share of."""
    mismatched: int = 0
    duration_ms: Distribution = field(default_factory=Distribution)
    attempts_histogram: dict[int, int] = field(default_factory=dict)
    unattributed_input_tokens: int = 0
    """Tokens and cost of the runs that no phase (or stage) owns: the runtime's side requests,
    and every response of an unstructured run."""
    unattributed_output_tokens: int = 0
    unattributed_cost_usd: float = 0.0
    unattributed_costed: int = 0


MAX_CHECK_ROWS = 10_000
"""Checks (rows of :attr:`phasegate.metrics.aggregate.LogAggregator.checks`) counted at most;
the lines of others are counted in its ``checks_unlisted``."""
CheckKey = tuple[str, str, int | None, str, str]
"""A check's row: its task, mode, phase (None: the task's own checks), kind and description."""


@dataclass(slots=True)
class CheckStats:
    """One check of one task (``check.ran`` lines), over many runs of it.

    A *run* of the check is one ``check.ran`` line: the gate ran it once. A *task run* that
    ran it is counted when the task run ends (its ``run.completed``), with whether the check's
    last run in it passed: the outcome the gate's verdict rested on."""

    runs: int = 0
    passed: int = 0
    duration_ms: Distribution = field(default_factory=Distribution)
    total_ms: float = 0.0
    """Every run's time added up: the time the gate spent on the check, never the model's."""
    task_runs: int = 0
    """Task runs that ran the check at least once and ended."""
    passed_at_end: int = 0
    """Of those, the ones whose last run of the check passed."""
    criteria: int = 0
    """Criteria a grader judged over its runs (a rubric's; 0 for every other kind)."""
    criteria_met: int = 0
    """Of those, the ones it found met."""


def merge(into: Stats, other: Stats) -> None:
    """Add ``other``'s counts into ``into`` (two stats of the same kind), field by field:
    numbers add up, counts by key add up, distributions merge (:meth:`Distribution.merge`)."""
    for item in fields(into):
        mine, theirs = getattr(into, item.name), getattr(other, item.name)
        if isinstance(mine, Distribution):
            mine.merge(theirs)
        elif isinstance(mine, dict):
            for key, count in theirs.items():
                mine[key] = mine.get(key, 0) + count
        elif isinstance(mine, tuple):
            setattr(into, item.name, tuple(a + b for a, b in zip(mine, theirs, strict=True)))
        else:
            setattr(into, item.name, mine + theirs)
