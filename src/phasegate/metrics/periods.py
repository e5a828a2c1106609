"""Trends: the same metrics per day or per week, in one streaming pass over the logs.

:class:`PeriodAggregator` is a :class:`~phasegate.metrics.aggregate.LogAggregator` whose
handlers hand each event to the aggregator of the period its timestamp falls in (a day, or an
ISO week starting on Monday, in a time zone: UTC by default). The period aggregators share the
runs still open, the phase names and the recorded runs, so a run that starts before midnight
and ends after it is counted once, in the period of its ``run.completed`` (a phase in the
period of its ``phase.completed``): each period's runs add up to the report's. Memory grows
with the number of periods and groups, never with the number of lines; a span of more than
:data:`MAX_PERIODS` periods between the first and the last is refused (it would be mostly
empty rows). An event that changes a figure and has no valid timestamp is a skipped line.

:func:`summarize_periods` adds to a summary ``over``, ``tz`` and ``periods``: every period from
the first to the last, an empty one included (``runs`` 0, no groups), each with its groups (as
the report's, under the same grouping) and ``total``: its figures over every group.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta, tzinfo
from typing import Any, Literal

from phasegate.errors import UsageError
from phasegate.metrics import fields
from phasegate.metrics.aggregate import LogAggregator, _Handler
from phasegate.metrics.stats import (
    MAX_CHECK_ROWS,
    CheckKey,
    CheckStats,
    PhaseStats,
    RunStats,
    merge,
)
from phasegate.modes import EventName, GroupBy

Over = Literal["day", "week"]
"""How long a trend's periods are."""
MAX_PERIODS = 1_000
"""The most periods a trend spans, from the first to the last."""


class PeriodAggregator(LogAggregator):
    """Accumulates run events per period of ``over`` in ``tz``; read with
    :func:`summarize_periods`, which also fills this aggregator's own totals."""

    def __init__(self, over: Over, tz: tzinfo, *, since: datetime | None = None) -> None:
        super().__init__(since=since)
        self.over: Over = over
        self.tz = tz
        self.periods: dict[date, LogAggregator] = {}
        self._starts: dict[str, date] = {}
        self._handlers = {name: self._router(name) for name in self._handlers}

    def _router(self, name: EventName) -> _Handler:
        def route(event: dict[str, Any]) -> None:
            self._period(event["timestamp"])._handlers[name](event)

        return route

    def _period(self, stamp: object) -> LogAggregator:
        # Timestamps repeat their minute across a run's lines: one parse per minute and offset.
        # Only EventLog's own shape (milliseconds and an offset) is cached by its minute.
        text = stamp if isinstance(stamp, str) else ""
        key = text[:16] + text[23:] if len(text) == 29 and text[23] in "+-" else None
        start = self._starts.get(key) if key is not None else None
        if start is None:
            start = period_start(fields.moment(stamp), self.over, self.tz)
            if key is not None:
                if len(self._starts) >= 4096:
                    self._starts.clear()
                self._starts[key] = start
        aggregator = self.periods.get(start)
        if aggregator is None:
            aggregator = self.periods[start] = LogAggregator()
            # One open-run table for every period: a run may end in another period than it began.
            aggregator._open = self._open
            aggregator.phase_names = self.phase_names
            aggregator.recordings = self.recordings
        return aggregator

    def collect(self) -> None:
        """Fill this aggregator's own ``runs``, ``phases`` and ``checks`` (the whole report)
        from its periods'."""
        runs: dict[tuple[str, str], RunStats] = {}
        phases: dict[tuple[str, str, int], PhaseStats] = {}
        checks: dict[CheckKey, CheckStats] = {}
        unlisted = checks_unlisted = 0
        for period in self.periods.values():
            for key, run_stats in period.runs.items():
                merge(runs.setdefault(key, RunStats()), run_stats)
            for phase_key, phase_stats in period.phases.items():
                merge(phases.setdefault(phase_key, PhaseStats()), phase_stats)
            for check_key, check_stats in period.checks.items():
                if check_key not in checks and len(checks) >= MAX_CHECK_ROWS:
                    checks_unlisted += check_stats.runs
                    continue
                merge(checks.setdefault(check_key, CheckStats()), check_stats)
            unlisted += period.recordings_unlisted
            checks_unlisted += period.checks_unlisted
        self.runs, self.phases, self.recordings_unlisted = runs, phases, unlisted
        self.checks, self.checks_unlisted = checks, checks_unlisted


def period_start(at: datetime, over: Over, tz: tzinfo) -> date:
    """The first day of the period ``at`` falls in, in ``tz`` (a week starts on Monday)."""
    day = at.astimezone(tz).date()
    return day - timedelta(days=day.weekday()) if over == "week" else day


def _next(start: date, over: Over) -> date:
    return start + timedelta(days=7 if over == "week" else 1)


def _moment(day: date, tz: tzinfo) -> str:
    """Midnight of ``day`` in ``tz``, as ISO 8601 with its offset."""
    return datetime.combine(day, time(), tzinfo=tz).isoformat()


def summarize_periods(
    aggregator: PeriodAggregator, summary: dict[str, Any], by: GroupBy, tz_name: str
) -> dict[str, Any]:
    """``summary`` (of ``aggregator``, after :meth:`PeriodAggregator.collect`) with ``over``,
    ``tz`` and ``periods``; raises :class:`~phasegate.errors.UsageError` when the logs span
    more than :data:`MAX_PERIODS` periods."""
    from phasegate.metrics.summary import summarize, total_fields

    over, starts = aggregator.over, sorted(aggregator.periods)
    periods: list[dict[str, Any]] = []
    if starts:
        span = (starts[-1] - starts[0]).days // (7 if over == "week" else 1) + 1
        if span > MAX_PERIODS:
            raise UsageError(
                f"the logs span {span} {over}s, more than {MAX_PERIODS}: report a shorter "
                "span, or by week"
            )
        day = starts[0]
        while day <= starts[-1]:
            end = _next(day, over)
            row: dict[str, Any] = {
                "start": _moment(day, aggregator.tz),
                "end": _moment(end, aggregator.tz),
            }
            period = aggregator.periods.get(day)
            if period is None:
                row.update(runs=0, total=total_fields(RunStats()), groups=[])
            else:
                part = summarize(period, by)
                row.update(runs=part["runs"], total=total_fields(_total(period)),
                           groups=part["groups"])  # fmt: skip
            periods.append(row)
            day = end
    return {**summary, "over": over, "tz": tz_name, "periods": periods}


def _total(aggregator: LogAggregator) -> RunStats:
    total = RunStats()
    for stats in aggregator.runs.values():
        merge(total, stats)
    return total
