"""What a report says: the aggregated metrics as one JSON-ready mapping.

``by`` chooses the grouping: ``phase`` (default) gives one group per task and mode with a row
per phase; ``task`` merges the modes of each task; ``mode`` merges the tasks of each mode (and
has no phase rows, since phases of different tasks do not line up). The mode comparison is
always per task: the success rate of each mode and the differences that matter (``gate``
against ``single-query`` and against ``unstructured``).

``checks`` has a row per check of a task the gate ran (``check.ran`` lines), grouped the same
way: per task, mode and phase by default; ``task`` merges its modes; ``mode`` merges the
checks of every task and phase that say the same (their kind and description). The check
comparison is always per check: how often each mode's task runs end with it passing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from phasegate.metrics.aggregate import LogAggregator
from phasegate.metrics.comparison import (
    DIGITS,
    check_comparison,
    mode_comparison,
    pooled_comparison,
    rounded,
)
from phasegate.metrics.fields import OVERHEAD_FIGURES
from phasegate.metrics.proportions import standard_error, wilson_interval
from phasegate.metrics.stats import (
    RELATIVE_ACCURACY,
    CheckKey,
    CheckStats,
    Distribution,
    Outcomes,
    PhaseStats,
    RunStats,
    merge,
)
from phasegate.modes import RECORDING_PAGE, GroupBy

SUMMARY_VERSION = 11
"""The shape of :func:`summarize`'s result. 2: ``warnings`` added, and ``cost_usd`` is null
when no line of a group recorded a cost. 3 (fields only added): a group's success rate has its
standard error and 95 % interval, and its cost and tokens per accepted run; mode comparison
rows have each mode's runs, accepted runs, standard error and interval and each difference's
interval; ``pooled_comparison`` is the same row over every task. 4 (fields only added): each
``p50``/``p95`` pair says how it was computed, ``percentiles`` (``exact`` or ``approximate``)
and ``relative_error`` (0, or 0.01 for a sketch's bound); each group has ``unattributed_usage``
(``input_tokens``, ``output_tokens``, ``cost_usd``): what no phase owns, so that the group's
tokens are its phases' plus these. 5 (fields only added): each group and phase has
``overhead``: the summed ``overhead`` of its lines (``requests``, ``input_tokens`` carried, the
gate's ``tool_tokens`` and ``text_tokens``, estimated) and how many ``runs`` reported one, and
``refusals``: the tool calls refused before they ran. 6 (fields only added): ``recordings``,
present when a run recorded itself: each recorded run's ``run_id``, ``task``, ``mode``,
``verdict``, ``recording`` (its folder) and ``page``; ``recordings_unlisted`` counts those past
the first 10,000. 7 (fields only added): each group and phase has ``subagents``, one row per
subagent type (``type``, ``calls``: successful ones, ``errors``: failed ones): the part of its
tool calls subagents made.
8 (fields only added): a trend (a report over days or weeks) has ``over`` (``day`` or ``week``),
``tz`` (the zone its periods are in) and ``periods``: each period's ``start``, ``end``,
``runs``, ``total`` (its run figures over every group) and ``groups``
(:mod:`phasegate.metrics.periods`). 9 (fields only added): each group has ``blocked``: the
attempts to leave the sandbox its runs blocked (docs/sandbox.md). 10 (fields only added):
``checks``, a row per check of a task (:func:`check_rows`), ``checks_unlisted`` (the runs of
checks past the first 10,000), and ``check_comparison``: per check, each mode's share of task
runs that ended with it passing (:func:`phasegate.metrics.comparison.check_comparison`).
11 (fields only added): each group and phase has ``grader_usage`` (``input_tokens``,
``output_tokens``, ``cost_usd``): what the grader sessions that judged rubric checks spent, from
the lines' ``grader_usage``; a phase's tokens are the agent's, a group's the run's, so a group's
tokens are its phases' plus their ``grader_usage`` plus ``unattributed_usage``; the row of a
check a grader judged has ``criteria`` (criteria it judged over the check's runs),
``criteria_met`` and ``criteria_met_rate``."""
TIME_EDGES_MS = [0, 1_000, 5_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_800_000]
"""Bin edges of the time-to-completion distribution (ms); the last bin is open-ended."""


def summarize(
    aggregator: LogAggregator, by: GroupBy = "phase", *, warnings: Sequence[str] = ()
) -> dict[str, Any]:
    """The report's content; ``warnings`` are what reading the logs ran into
    (:attr:`phasegate.metrics.reading.LogReader.warnings`)."""
    runs: dict[tuple[str | None, str | None], RunStats] = {}
    phases: dict[tuple[str | None, str | None, int], PhaseStats] = {}
    for (run_task, run_mode), run_stats in aggregator.runs.items():
        key = (run_task if by != "mode" else None, run_mode if by != "task" else None)
        merge(runs.setdefault(key, RunStats()), run_stats)
    if by != "mode":
        for (p_task, p_mode, index), phase_stats in aggregator.phases.items():
            phase_key = (p_task, p_mode if by != "task" else None, index)
            merge(phases.setdefault(phase_key, PhaseStats()), phase_stats)
            runs.setdefault((phase_key[0], phase_key[1]), RunStats())
    groups = []
    for (task, mode), stats in sorted(
        runs.items(), key=lambda item: (str(item[0][0]), str(item[0][1]))
    ):
        rows = sorted(
            (index, phase_stats)
            for (of_task, of_mode, index), phase_stats in phases.items()
            if (of_task, of_mode) == (task, mode)
        )
        groups.append(
            {
                "task": task,
                "mode": mode,
                **_run_fields(stats),
                "phases": [
                    _phase_fields(index, aggregator.phase_names.get((str(task), index)), p)
                    for index, p in rows
                ],
            }
        )
    summary: dict[str, Any] = {
        "summary_version": SUMMARY_VERSION,
        "by": by,
        "lines": aggregator.lines,
        "skipped_lines": aggregator.skipped,
        "warnings": list(warnings),
        "runs": sum(stats.runs for stats in aggregator.runs.values()),
        "groups": groups,
        "mode_comparison": mode_comparison(aggregator.runs),
        "pooled_comparison": pooled_comparison(aggregator.runs),
        "checks": check_rows(aggregator, by),
        "checks_unlisted": aggregator.checks_unlisted,
        "check_comparison": check_comparison(aggregator.checks, aggregator.phase_names),
    }
    if aggregator.recordings:
        summary["recordings"] = [
            {**run, "page": os.path.join(run["recording"], RECORDING_PAGE)}
            for run in aggregator.recordings
        ]
        summary["recordings_unlisted"] = aggregator.recordings_unlisted
    return summary


def check_rows(aggregator: LogAggregator, by: GroupBy = "phase") -> list[dict[str, Any]]:
    """A row per check, grouped by ``by`` (``task`` merges modes; ``mode`` merges tasks and
    phases: ``task`` and ``phase`` are null), sorted by task, mode, phase (the task's own
    checks last) and description: ``task``, ``mode``, ``phase`` (null: the task's own
    checks), ``phase_name``, ``kind``, ``description``; ``runs`` (``check.ran`` lines),
    ``passed``, ``pass_rate``, ``duration_ms`` (p50 and p95 of a run) and ``total_ms`` (every
    run's time); ``task_runs`` (ended task runs that ran it), ``passed_at_end`` (those whose
    last run of it passed) and ``end_pass_rate``; for a check a grader judged (a rubric),
    ``criteria`` (the criteria it judged over the check's runs, each run's counted),
    ``criteria_met`` and ``criteria_met_rate``."""
    merged: dict[tuple[str | None, str | None, int | None, str, str], CheckStats] = {}
    for key, stats in aggregator.checks.items():
        merge(merged.setdefault(_grouped(key, by), CheckStats()), stats)
    rows = []
    for (task, mode, phase, kind, description), stats in sorted(merged.items(), key=_order):
        name = aggregator.phase_names.get((task, phase)) if task and phase else None
        rows.append(
            {"task": task, "mode": mode, "phase": phase, "phase_name": name, "kind": kind,
             "description": description, "runs": stats.runs, "passed": stats.passed,
             "pass_rate": _rate(stats.passed, stats.runs),
             "duration_ms": _quantiles(stats.duration_ms),
             "total_ms": round(stats.total_ms, 1), "task_runs": stats.task_runs,
             "passed_at_end": stats.passed_at_end,
             "end_pass_rate": _rate(stats.passed_at_end, stats.task_runs),
             **_criteria_fields(stats)}
        )  # fmt: skip
    return rows


def _criteria_fields(stats: CheckStats) -> dict[str, Any]:
    """A graded check's criteria figures; none for a check no grader judged."""
    if not stats.criteria:
        return {}
    return {"criteria": stats.criteria, "criteria_met": stats.criteria_met,
            "criteria_met_rate": _rate(stats.criteria_met, stats.criteria)}  # fmt: skip


def _grouped(key: CheckKey, by: GroupBy) -> tuple[str | None, str | None, int | None, str, str]:
    task, mode, phase, kind, description = key
    if by == "task":
        return task, None, phase, kind, description
    if by == "mode":
        return None, mode, None, kind, description
    return task, mode, phase, kind, description


def _order(item: tuple[tuple[str | None, str | None, int | None, str, str], Any]) -> Any:
    task, mode, phase, kind, description = item[0]
    return str(task), str(mode), phase is None, phase or 0, description, kind


def total_fields(stats: RunStats) -> dict[str, Any]:
    """A group's run figures (as in ``groups``) for ``stats``: a period's total in a trend."""
    return _run_fields(stats)


def _outcome_fields(stats: Outcomes, rate: str) -> dict[str, Any]:
    """The fields runs and phases share; ``rate`` names the share accepted."""
    return {
        "runs": stats.runs,
        rate: _rate(stats.accepted, stats.runs),
        "first_attempt_rate": _rate(stats.first_attempt, stats.runs),
        "mean_attempts": _mean(stats.attempts, stats.runs),
        "tool_errors": stats.tool_errors,
        "refusals": stats.refusals,
        "subagents": [
            {"type": kind, "calls": calls, "errors": stats.subagent_errors.get(kind, 0)}
            for kind, calls in sorted(stats.subagent_calls.items())
        ],
        "input_tokens": stats.input_tokens,
        "output_tokens": stats.output_tokens,
        "cost_usd": round(stats.cost_usd, 6) if stats.costed else None,
        "grader_usage": {
            "input_tokens": stats.grader_input_tokens,
            "output_tokens": stats.grader_output_tokens,
            "cost_usd": round(stats.grader_cost_usd, 6) if stats.grader_costed else None,
        },
        "overhead": {
            "runs": stats.overhead_lines,
            **dict(zip(OVERHEAD_FIGURES, stats.overhead, strict=True)),
        },
    }


def _run_fields(stats: RunStats) -> dict[str, Any]:
    error = standard_error(stats.accepted, stats.runs)
    accepted = stats.accepted
    return {
        **_outcome_fields(stats, "success_rate"),
        "accepted": accepted,
        "errors": stats.errors,
        "blocked": stats.blocked,
        "mismatch_rate": _rate(stats.mismatched, stats.reconciled),
        "duration_ms": _quantiles(stats.duration_ms),
        "attempts_histogram": {str(k): v for k, v in sorted(stats.attempts_histogram.items())},
        "success_rate_standard_error": round(error, DIGITS) if error is not None else None,
        "success_rate_interval_95": rounded(wilson_interval(accepted, stats.runs)),
        "cost_per_accepted_usd": (
            round(stats.cost_usd / accepted, 6) if accepted and stats.costed else None
        ),
        "input_tokens_per_accepted": _mean(stats.input_tokens, accepted),
        "output_tokens_per_accepted": _mean(stats.output_tokens, accepted),
        "unattributed_usage": {
            "input_tokens": stats.unattributed_input_tokens,
            "output_tokens": stats.unattributed_output_tokens,
            "cost_usd": (
                round(stats.unattributed_cost_usd, 6) if stats.unattributed_costed else None
            ),
        },
    }


def _phase_fields(index: int, name: str | None, stats: PhaseStats) -> dict[str, Any]:
    histogram = stats.to_completion_ms.bins([*TIME_EDGES_MS, float("inf")])
    return {
        "index": index,
        "name": name,
        **_outcome_fields(stats, "completion_rate"),
        "time_to_completion_ms": {
            **_quantiles(stats.to_completion_ms),
            "histogram": [
                {"from_ms": low, "count": count}
                for low, count in zip(TIME_EDGES_MS, histogram, strict=True)
            ],
        },
    }


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _mean(total: int, count: int) -> float | None:
    return round(total / count, 3) if count else None


def _quantiles(times: Distribution) -> dict[str, Any]:
    """p50 and p95 to 0.1 ms, and whether they are exact or within the sketch's bound."""
    p50, p95 = times.quantile(0.5), times.quantile(0.95)
    return {
        "p50": round(p50, 1) if p50 is not None else None,
        "p95": round(p95, 1) if p95 is not None else None,
        "percentiles": "exact" if times.exact else "approximate",
        "relative_error": 0.0 if times.exact else RELATIVE_ACCURACY,
    }
