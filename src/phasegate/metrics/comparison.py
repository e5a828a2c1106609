"""The mode comparison: per task (and pooled over tasks), the share of runs each mode got
accepted, how uncertain it is, and how much ``gate`` gains over the other two modes.

Each run of a task in a mode is one trial, so a rate over ``n`` repeats has the standard error
``sqrt(p(1 - p)/n)`` and a Wilson 95 % interval; a difference between two modes gets
Newcombe's hybrid score interval (:mod:`phasegate.metrics.proportions`). Pooling adds up the
runs of every task per mode, as if all were repeats of one task.

The same comparison is made per check of a task (:func:`check_comparison`): each task run that
ran the check is one trial, passed when the check's last run in it passed, so a row says how
often each mode ends with the check holding (a batch's units are such runs).
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
from phasegate.metrics.stats import CheckKey, CheckStats, RunStats
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
    return {"task": task, **compared(counts)}


def check_comparison(
    checks: Mapping[CheckKey, CheckStats], phase_names: Mapping[tuple[str, int], str]
) -> list[dict[str, Any]]:
    """One row per check of a task (its ``task``, ``phase``, ``phase_name``, ``kind`` and
    ``description``) that task runs of at least two modes ran and ended: per mode the share
    whose last run of the check passed (``end_pass_rate``, ``task_runs``, ``passed_at_end``,
    ``standard_error``, ``interval_95``) and the gate's differences, as :func:`compared`."""
    per_check: dict[tuple[str, int | None, str, str], dict[str, tuple[int, int]]] = {}
    for (task, mode, phase, kind, description), stats in checks.items():
        if stats.task_runs:
            modes = per_check.setdefault((task, phase, kind, description), {})
            modes[mode] = (stats.passed_at_end, stats.task_runs)
    rows = []
    for (task, phase, kind, description), modes in sorted(per_check.items(), key=_check_order):
        counts: dict[str, tuple[int, int]] = {m: modes[m] for m in MODES if m in modes}
        if len(counts) < 2:
            continue
        name = phase_names.get((task, phase)) if phase is not None else None
        rows.append(
            {"task": task, "phase": phase, "phase_name": name, "kind": kind,
             "description": description,
             **compared(counts, share="end_pass_rate", part="passed_at_end", whole="task_runs")}
        )  # fmt: skip
    return rows


def _check_order(item: tuple[tuple[str, int | None, str, str], Any]) -> tuple[Any, ...]:
    task, phase, kind, description = item[0]
    return task, phase is None, phase or 0, description, kind


def compared(
    counts: Mapping[str, tuple[int, int]],
    *,
    share: str = "success_rate",
    part: str = "accepted",
    whole: str = "runs",
) -> dict[str, Any]:
    """The figures of a comparison of the modes in ``counts`` (each mode's successes and
    trials, in mode order): per mode the share (``share``), then the two ``gate_minus_*``
    differences, then per mode the trials (``whole``), the successes (``part``),
    ``standard_error`` and ``interval_95``, then each difference's ``*_interval_95``."""
    rates = {mode: rate(passed, trials) for mode, (passed, trials) in counts.items()}
    row: dict[str, Any] = {share: rates}
    for other, key in _OTHERS:
        row[key] = _difference(rates.get("gate"), rates.get(other))
    row[whole] = {mode: trials for mode, (_, trials) in counts.items()}
    row[part] = {mode: passed for mode, (passed, _) in counts.items()}
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
