"""How numbers, names and the shared table rows read in every rendering of a report
(terminal, Markdown, HTML)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

from phasegate.metrics.stats import MAX_CHECK_ROWS
from phasegate.modes import MODES

MISSING = "–"
PHASE_COLUMNS = ("phase", "runs", "completed", "1st attempt", "mean attempts",
                 "p50 to complete", "p95 to complete", "tool errors", "refused calls")  # fmt: skip
PHASE_USAGE_COLUMNS = ("phase", "tokens in/out", "cost", "grader", "input and the gate's share",
                       "time to complete (runs)")  # fmt: skip
MODE_COLUMNS = ("task", *MODES, "gate − single-query", "95 % interval, pts", "gate − unstructured",
                "95 % interval, pts")  # fmt: skip
MODE_DETAIL_COLUMNS = ("task", "mode", "runs", "accepted", "success", "± se", "95 % interval")
BATCH_DIRECTORY_COLUMNS = ("directory", "batch", "shard", "total units", "planned", "finished")
MEASURE_COLUMNS = ("measure", "value")
RECORDING_COLUMNS = ("run", "task", "mode", "verdict", "page")
SUBAGENT_COLUMNS = ("task", "mode", "phase", "subagent type", "calls ok", "failed calls")
CHECK_COLUMNS = ("task", "mode", "phase", "check", "runs", "passed", "pass rate", "p50 run",
                 "p95 run", "time in all", "task runs", "passed at the end",
                 "end pass rate", "criteria met")  # fmt: skip
CHECK_MODE_COLUMNS = ("task", "phase", "check", *MODES, "gate − single-query",
                      "95 % interval, pts", "gate − unstructured",
                      "95 % interval, pts")  # fmt: skip
CHECK_MODE_DETAIL_COLUMNS = ("task", "phase", "check", "mode", "task runs", "passed at the end",
                             "end pass rate", "± se", "95 % interval")  # fmt: skip


def subagent_rows(summary: dict[str, Any]) -> list[list[str]]:
    """The subagents' rows (``SUBAGENT_COLUMNS``): per group, its runs' (phase ``all``), then
    each phase's; the calls are part of the group's and phase's own figures."""
    rows: list[list[str]] = []
    for group in summary["groups"]:
        names = [str(group["task"] or "all"), str(group["mode"] or "all")]
        owners = [("all", group), *((str(p["index"]), p) for p in group["phases"])]
        for phase, owner in owners:
            rows.extend(
                [*names, phase, str(row["type"]), str(row["calls"]), str(row["errors"])]
                for row in owner.get("subagents", [])
            )
    return rows


def quantity(amount: int, noun: str, plural: str | None = None) -> str:
    """``1 run``, ``3 runs``, ``0 runs``: a number and its noun, singular only for one."""
    return f"{amount} {noun if amount == 1 else plural or f'{noun}s'}"


def usd(value: float | None, places: int = 4) -> str:
    """``0.5`` → ``$0.5000``; an unknown cost (no line recorded one) is not ``$0.0000``.
    ``places=6`` shows a run's cost shares exactly (they are whole millionths)."""
    return MISSING if value is None else f"${value:.{places}f}"


def percent(value: float | None) -> str:
    """``0.8333`` → ``83 %``."""
    return MISSING if value is None else f"{value * 100:.0f} %"


def points(value: float | None) -> str:
    """A difference of rates: ``0.25`` → ``+25 pts``."""
    return MISSING if value is None else f"{value * 100:+.0f} pts"


def percent_interval(pair: list[float] | None) -> str:
    """A rate's interval: ``[0.21, 0.94]`` → ``21 to 94 %`` (an en dash for "to")."""
    return MISSING if pair is None else f"{pair[0] * 100:.0f}–{pair[1] * 100:.0f} %"


def points_interval(pair: list[float] | None) -> str:
    """A difference's interval: ``[-0.05, 0.91]`` → ``-5 to +91`` points (a minus sign)."""
    if pair is None:
        return MISSING
    low, high = (f"{value * 100:+.0f}".replace("-", "−") for value in pair)
    return f"{low} to {high}"


def error_points(value: float | None) -> str:
    """A standard error of a rate, in points: ``0.2357`` → ``±24``."""
    return MISSING if value is None else f"±{value * 100:.0f}"


def number(value: float | None) -> str:
    """A mean: two decimals."""
    return MISSING if value is None else f"{value:.2f}"


def duration(ms: float | None) -> str:
    """``850`` → ``850 ms``, ``12_300`` → ``12.3 s``, ``90_000`` → ``1.5 min``."""
    if ms is None:
        return MISSING
    if ms >= 60_000:
        return f"{ms / 60_000:.3g} min"
    return f"{ms / 1000:.3g} s" if ms >= 1000 else f"{ms:.0f} ms"


APPROXIMATE_LEGEND = "≈: a percentile from a sketch, within 1 % of the exact value."
"""What a ``≈`` before a time means, said once under a report that has one."""


def has_approximate(summary: dict[str, Any]) -> bool:
    """Whether any p50/p95 of ``summary`` came from the sketch."""
    return any(
        times.get("percentiles") == "approximate"
        for group in summary["groups"]
        for times in (
            group["duration_ms"],
            *(phase["time_to_completion_ms"] for phase in group.get("phases", [])),
        )
    ) or any(
        check["duration_ms"].get("percentiles") == "approximate"
        for check in summary.get("checks", ())
    )


def percentile(times: dict[str, Any], name: str) -> str:
    """A report's ``p50`` or ``p95`` (``name``) as a duration, marked ``≈`` when it came from
    the sketch (``percentiles`` is ``approximate``: within 1 %) rather than exactly."""
    text = duration(times[name])
    return f"≈{text}" if times.get("percentiles") == "approximate" and text != MISSING else text


def unattributed(usage: dict[str, Any]) -> str:
    """A group's tokens and cost that no phase owns (``unattributed_usage``): ``50/10
    $0.0001``; the group's tokens are its phases' plus these."""
    return f"{usage['input_tokens']}/{usage['output_tokens']} {usd(usage['cost_usd'])}"


def grader(usage: dict[str, Any]) -> str:
    """A group's or phase's grader sessions (``grader_usage``): ``600/80 $0.0240``, tokens in
    and out and cost; a group's tokens are its phases' plus these plus what no phase owns."""
    return f"{usage['input_tokens']}/{usage['output_tokens']} {usd(usage['cost_usd'])}"


def criteria_met(row: dict[str, Any]) -> str:
    """A check row's criteria a grader found met, of those it judged, and the rate: ``5 of
    6, 83 %``; :data:`MISSING` for a check no grader judged."""
    if not row.get("criteria"):
        return MISSING
    return f"{row['criteria_met']} of {row['criteria']}, {percent(row['criteria_met_rate'])}"


def overhead(figures: dict[str, Any]) -> str:
    """What a group's or phase's requests carried and the gate's share (``overhead``):
    ``12 req, 1200 in; gate est. 300+420 (4 runs)``: the gate's tool definitions and text in
    estimated tokens (not marked ``≈``: that mark is the sketch's), over the runs reporting it."""
    if not figures["runs"]:
        return MISSING
    return (
        f"{figures['requests']} req, {figures['input_tokens']} in; gate est. "
        f"{figures['tool_tokens']}+{figures['text_tokens']} ({quantity(figures['runs'], 'run')})"
    )


def per_accepted_tokens(group: dict[str, Any]) -> str:
    """Input and output tokens per accepted run: ``1200/150``."""
    tokens_in, tokens_out = (
        group.get("input_tokens_per_accepted"),
        group.get("output_tokens_per_accepted"),
    )
    if tokens_in is None or tokens_out is None:
        return MISSING
    return f"{tokens_in:.0f}/{tokens_out:.0f}"


def group_label(group: dict[str, Any]) -> str:
    """``task / mode`` of a summary group, without the part its grouping merged away."""
    return " / ".join(str(part) for part in (group["task"], group["mode"]) if part is not None)


def phase_name(phase: dict[str, Any]) -> str:
    """A phase row's name, or ``phase N`` when the log never named it."""
    return str(phase["name"]) if phase["name"] is not None else f"phase {phase['index']}"


def phase_label(phase: dict[str, Any]) -> str:
    """``1. edit``."""
    return f"{phase['index']}. {phase_name(phase)}"


def outcome_cells(row: dict[str, Any], rate: str) -> list[str]:
    """Runs, the accepted share (``rate``), first-attempt share and mean attempts of a group
    or phase row."""
    return [
        str(row["runs"]),
        percent(row[rate]),
        percent(row["first_attempt_rate"]),
        number(row["mean_attempts"]),
    ]


def phase_cells(phase: dict[str, Any]) -> list[str]:
    """A phase row under :data:`PHASE_COLUMNS`."""
    times = phase["time_to_completion_ms"]
    return [
        phase_label(phase),
        *outcome_cells(phase, "completion_rate"),
        percentile(times, "p50"),
        percentile(times, "p95"),
        str(phase["tool_errors"]),
        str(phase["refusals"]),
    ]


def phase_usage_cells(phase: dict[str, Any]) -> list[str]:
    """A phase row under :data:`PHASE_USAGE_COLUMNS`: its (agent's) tokens, cost, its
    grader's (:func:`grader`), input and the gate's share of it (:func:`overhead`), and the
    time-to-completion distribution (:func:`time_bins`)."""
    return [
        phase_label(phase),
        f"{phase['input_tokens']}/{phase['output_tokens']}",
        usd(phase["cost_usd"]),
        grader(phase["grader_usage"]),
        overhead(phase["overhead"]),
        time_bins(phase["time_to_completion_ms"]["histogram"]),
    ]


def time_bins(histogram: list[dict[str, Any]]) -> str:
    """A time-to-completion histogram in a cell, its empty bins left out: ``≥ 1 s: 3, ≥ 5 s:
    1`` (each bin runs to the next one's start)."""
    shown = [f"≥ {duration(b['from_ms'])}: {b['count']}" for b in histogram if b["count"]]
    return ", ".join(shown) or MISSING


def attempts_counts(histogram: dict[str, int]) -> str:
    """Runs per number of attempts, each as attempts, a multiplication sign and runs:
    ``{"1": 3, "2": 1}`` reads 3 runs of 1 attempt and 1 run of 2."""
    return ", ".join(f"{attempts}×{runs}" for attempts, runs in histogram.items()) or MISSING


def comparison_cells(row: dict[str, Any]) -> list[str]:
    """A mode-comparison row under :data:`MODE_COLUMNS` (the pooled row's task is null)."""
    rates = row["success_rate"]
    return [
        "all tasks" if row["task"] is None else str(row["task"]),
        *(percent(rates.get(mode)) for mode in MODES),
        points(row["gate_minus_single_query"]),
        points_interval(row.get("gate_minus_single_query_interval_95")),
        points(row["gate_minus_unstructured"]),
        points_interval(row.get("gate_minus_unstructured_interval_95")),
    ]


def comparison_rows(summary: dict[str, Any]) -> list[list[str]]:
    """Every row of the mode comparison: one per task, then the tasks pooled (when there is
    more than one task)."""
    rows = [comparison_cells(row) for row in summary["mode_comparison"]]
    pooled = summary.get("pooled_comparison")
    if pooled is not None and len(rows) > 1:
        rows.append(comparison_cells(pooled))
    return rows


def comparison_detail_rows(summary: dict[str, Any]) -> list[list[str]]:
    """Per task (then all tasks pooled, when there is more than one task) and mode with runs:
    the runs, accepted runs, success rate, its standard error and 95 % interval, under
    :data:`MODE_DETAIL_COLUMNS`."""
    rows = list(summary["mode_comparison"])
    pooled = summary.get("pooled_comparison")
    if pooled is not None and len(rows) > 1:
        rows.append(pooled)
    return [
        ["all tasks" if row["task"] is None else str(row["task"]), mode, str(runs),
         str(row["accepted"][mode]), percent(row["success_rate"][mode]),
         error_points(row["standard_error"][mode]), percent_interval(row["interval_95"][mode])]
        for row in rows
        for mode, runs in row["runs"].items()
    ]  # fmt: skip


def check_phase(row: dict[str, Any]) -> str:
    """Where a check row's check belongs: ``1. edit`` (``phase 1`` when the log never named
    it), ``task's own`` for the task's own checks, ``all`` when its grouping merged the phases."""
    if row["phase"] is not None:
        name = row.get("phase_name")
        return f"{row['phase']}. {name}" if name is not None else f"phase {row['phase']}"
    return "task's own" if row["task"] is not None else "all"


def check_cells(row: dict[str, Any]) -> list[str]:
    """A check row under :data:`CHECK_COLUMNS`: its runs, how many passed and the rate, p50
    and p95 of a run and every run's time added up, then the task runs that ran it and how
    many of them ended with it passing, and a rubric's criteria met (:func:`criteria_met`)."""
    return [
        str(row["task"] or "all"),
        str(row["mode"] or "all"),
        check_phase(row),
        str(row["description"]),
        str(row["runs"]),
        str(row["passed"]),
        percent(row["pass_rate"]),
        percentile(row["duration_ms"], "p50"),
        percentile(row["duration_ms"], "p95"),
        duration(row["total_ms"]),
        str(row["task_runs"]),
        str(row["passed_at_end"]),
        percent(row["end_pass_rate"]),
        criteria_met(row),
    ]


def check_rows(summary: dict[str, Any]) -> list[list[str]]:
    """Every check row of ``summary`` under :data:`CHECK_COLUMNS`."""
    return [check_cells(row) for row in summary.get("checks", ())]


def check_comparison_rows(summary: dict[str, Any]) -> list[list[str]]:
    """Every row of the check comparison under :data:`CHECK_MODE_COLUMNS`."""
    return [
        [str(row["task"]), check_phase(row), str(row["description"]),
         *(percent(row["end_pass_rate"].get(mode)) for mode in MODES),
         points(row["gate_minus_single_query"]),
         points_interval(row["gate_minus_single_query_interval_95"]),
         points(row["gate_minus_unstructured"]),
         points_interval(row["gate_minus_unstructured_interval_95"])]
        for row in summary.get("check_comparison", ())
    ]  # fmt: skip


def check_comparison_detail_rows(summary: dict[str, Any]) -> list[list[str]]:
    """Per check and mode of the check comparison, under :data:`CHECK_MODE_DETAIL_COLUMNS`."""
    return [
        [str(row["task"]), check_phase(row), str(row["description"]), mode, str(runs),
         str(row["passed_at_end"][mode]), percent(row["end_pass_rate"][mode]),
         error_points(row["standard_error"][mode]), percent_interval(row["interval_95"][mode])]
        for row in summary.get("check_comparison", ())
        for mode, runs in row["task_runs"].items()
    ]  # fmt: skip


def check_sections(summary: dict[str, Any]) -> list[tuple[str, tuple[str, ...], list[list[str]]]]:
    """(title, columns, rows) of the checks' tables: every check, then, for the checks that
    task runs of more than one mode ran, each mode's share of runs ending with it passing."""
    checks = check_rows(summary)
    if not checks:
        return []
    units = " (each task run is a unit)" if "batch" in summary else ""
    sections: list[tuple[str, tuple[str, ...], list[list[str]]]] = [
        (f"Checks the gate ran{units}", CHECK_COLUMNS, checks)
    ]
    compared = check_comparison_rows(summary)
    if compared:
        sections += [
            ("Checks compared (passing at the end of a task run)", CHECK_MODE_COLUMNS, compared),
            ("Checks compared: each mode", CHECK_MODE_DETAIL_COLUMNS,
             check_comparison_detail_rows(summary)),
        ]  # fmt: skip
    return sections


def checks_unlisted(summary: dict[str, Any]) -> str | None:
    """A sentence on the check runs not in the table, or None when every one is."""
    unlisted = summary.get("checks_unlisted", 0)
    if not unlisted:
        return None
    return (
        f"and {quantity(unlisted, 'run')} of checks past the first {MAX_CHECK_ROWS:,}, not listed"
    )


def batch_tables(batch: dict[str, Any]) -> list[tuple[str, tuple[str, ...], list[list[str]]]]:
    """(title, columns, rows) of the batch section: its directories, then its totals."""
    directories = [
        [str(d["path"]), str(d["batch"] or MISSING), str(d["shard"] or MISSING),
         _count_or_missing(d["total_units"]), str(d["planned"]), str(d["finished"])]
        for d in batch["directories"]
    ]  # fmt: skip
    verdicts = ", ".join(f"{name} {count}" for name, count in batch["verdicts"].items())
    requests = batch["model_requests"]
    totals = [
        ["units in the batch", _count_or_missing(batch["total_units"])],
        ["units planned", str(batch["planned"])],
        ["units finished", str(batch["finished"])],
        ["units missing", _listed(batch["missing"])],
        ["verdicts", verdicts or MISSING],
        ["duplicates", _listed(batch["duplicates"])],
        ["cost", usd(batch["cost_usd"])],
        ["model requests", _count_or_missing(requests)],
    ]
    if batch["unplanned"]:
        totals.insert(4, ["units in no manifest", _listed(batch["unplanned"])])
    return [("Batch directories", BATCH_DIRECTORY_COLUMNS, directories),
            ("Batch", MEASURE_COLUMNS, totals)]  # fmt: skip


def _listed(ids: list[str]) -> str:
    """``2: a, b``; ``0``."""
    return f"{len(ids)}: {', '.join(ids)}" if ids else "0"


def _count_or_missing(value: int | None) -> str:
    return MISSING if value is None else str(value)


def recording_rows(summary: dict[str, Any]) -> list[list[str]]:
    """The recorded runs' rows (``RECORDING_COLUMNS``; the page as its path), in log order."""
    return [
        [str(run["run_id"]), str(run["task"]), str(run["mode"]), str(run["verdict"]),
         str(run["page"])]
        for run in summary.get("recordings", ())
    ]  # fmt: skip


def recordings_unlisted(summary: dict[str, Any]) -> str | None:
    """A sentence on the recorded runs not listed, or None when every one is."""
    unlisted = summary.get("recordings_unlisted", 0)
    return f"and {quantity(unlisted, 'recorded run')} more, not listed" if unlisted else None


def page_href(page: str, base: Path | None) -> str:
    """The link to a run's page (a path) from a report written in the folder ``base``: a
    relative URL when both lie on one file system tree, else a ``file:`` URI for an absolute
    path (or the relative path as given, without ``base``). Percent-encoded, so no path can
    become a scheme (``javascript:``) or break out of the link; escape it where it stands."""
    path = Path(page)
    if base is not None:
        try:
            relative = os.path.relpath(os.path.abspath(path), os.path.abspath(base))
        except ValueError:  # another drive (Windows): no relative path
            relative = None
        if relative is not None:
            return quote(Path(relative).as_posix())
    if path.is_absolute():
        return path.as_uri()
    return quote(path.as_posix())
