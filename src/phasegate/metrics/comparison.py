"""The mode comparison: per task (and pooled over tasks), the share of runs each mode got
accepted, how uncertain it is, and how much ``gate`` gains over the other two modes.

Each run of a task in a mode is one trial, so a rate over ``n`` repeats has the standard error
``sqrt(p(1 - p)/n)`` and a Wilson 95 % interval; a difference between two modes gets
Newcombe's hybrid score interval (:mod:`phasegate.metrics.proportions`). Pooling adds up the
runs of every task per mode, as if all were repeats of one task.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from phasegate.metrics.proportions import (
    Interval,
    difference_interval,
    standard_error,
    wilson_interval,
)
from phasegate.metrics.stats import RunStats
from phasegate.modes import MODES

DIGITS = 4
"""Rates, errors and interval bounds are rounded to this many decimals."""
_OTHERS = (("single-query", "gate_minus_single_query"), ("unstructured", "gate_minus_unstructured"))


def mode_comparison(runs: Mapping[tuple[str, str], RunStats]) -> list[dict[str, Any]]:
    """One row per task (sorted) from the runs of each (task, mode): see
    :func:`comparison_row`. Tasks without runs in any mode (pipelines) have no row."""
    tasks = sorted({task for task, _ in runs})
    rows = [
        comparison_row(task, {mode: stats for (t, mode), stats in runs.items() if t == task})
        for task in tasks
    ]
    return [row for row in rows if row["success_rate"]]  # a pipeline's runs have no mode


def pooled_comparison(runs: Mapping[tuple[str, str], RunStats]) -> dict[str, Any] | None:
    """The row of every task's runs added up per mode (``task`` is null); None without runs
    in any mode."""
    per_mode: dict[str, RunStats] = {}
    for (_, mode), stats in runs.items():
        pooled = per_mode.setdefault(mode, RunStats())
        pooled.runs += stats.runs
        pooled.accepted += stats.accepted
    row = comparison_row(None, per_mode)
    return row if row["success_rate"] else None


def comparison_row(task: str | None, modes: Mapping[str, RunStats]) -> dict[str, Any]:
    """``success_rate`` and the two ``gate_minus_*`` differences (the fields of summary
    version 2), then per mode ``runs``, ``accepted``, ``standard_error`` and ``interval_95``,
    and each difference's ``*_interval_95``. Only modes with runs appear, in mode order."""
    counts: dict[str, tuple[int, int]] = {
        m: (modes[m].accepted, modes[m].runs) for m in MODES if m in modes and modes[m].runs
    }
    rates = {mode: rate(accepted, runs) for mode, (accepted, runs) in counts.items()}
    row: dict[str, Any] = {"task": task, "success_rate": rates}
    for other, key in _OTHERS:
        row[key] = _difference(rates.get("gate"), rates.get(other))
    row["runs"] = {mode: runs for mode, (_, runs) in counts.items()}
    row["accepted"] = {mode: accepted for mode, (accepted, _) in counts.items()}
    row["standard_error"] = {mode: _round(standard_error(*c)) for mode, c in counts.items()}
    row["interval_95"] = {mode: rounded(wilson_interval(*c)) for mode, c in counts.items()}
    gate = counts.get("gate")
    for other, key in _OTHERS:
        versus = counts.get(other)
        interval = None
        if gate is not None and versus is not None:
            interval = difference_interval(*gate, *versus)
        row[f"{key}_interval_95"] = rounded(interval)
    return row


def rate(part: int, whole: int) -> float | None:
    """``part / whole`` rounded; None when ``whole`` is 0."""
    return round(part / whole, DIGITS) if whole else None


def rounded(interval: Interval | None) -> list[float] | None:
    """An interval as a JSON pair, rounded."""
    return None if interval is None else [round(interval[0], DIGITS), round(interval[1], DIGITS)]


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, DIGITS)


def _difference(a: float | None, b: float | None) -> float | None:
    return round(a - b, DIGITS) if a is not None and b is not None else None
