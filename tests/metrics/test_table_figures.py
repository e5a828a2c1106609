"""``--format table`` never drops a figure that ``json`` has: every field of a real report's
JSON is looked up, formatted as the table formats it, in the table's row of its group, phase,
task and mode, or batch measure. A field added to the JSON and not to the table fails here
until it is rendered (or, when it is no figure, listed in :data:`NOT_FIGURES`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from phasegate.batches.collect import collect_batches
from phasegate.metrics.aggregate import LogAggregator
from phasegate.metrics.formatting import (
    MISSING,
    attempts_counts,
    check_phase,
    duration,
    error_points,
    grader,
    number,
    percent,
    percent_interval,
    phase_label,
    points,
    points_interval,
    time_bins,
    unattributed,
    usd,
)
from phasegate.metrics.render import render_table
from phasegate.metrics.summary import summarize
from phasegate.modes import GroupBy
from phasegate.testing.event_log import synthetic_log_lines
from tests.helpers.batch_dirs import GOOD, LAZY, make_unit, run_into, write_manifest
from tests.helpers.logs import LogWriter

NOT_FIGURES = {"summary_version", "by", "task", "mode", "index", "name", "path", "batch",
               "shard", "percentiles", "relative_error", "phase", "phase_name", "kind",
               "description"}  # fmt: skip
"""Keys that name a row or say how the report was made: the table shows them as the row's
name (a phase's index and name as ``1. edit``), as a mark (an approximate percentile is
``≈``, with a legend: tests/metrics/test_render.py), or not at all."""

Rows = list[tuple[str, list[str]]]
"""Every body row of the rendered tables: (the table's title, its cells)."""


def _count(value: int | None) -> str:
    return MISSING if value is None else str(value)


def _tokens(value: float | None) -> str:
    return MISSING if value is None else f"{value:.0f}"


def _listed(ids: list[str]) -> str:
    return f"{len(ids)}: {', '.join(ids)}" if ids else "0"


COUNTS = ("runs", "accepted", "errors", "tool_errors", "input_tokens", "output_tokens", "lines",
          "skipped_lines", "planned", "finished", "total_units", "model_requests", "requests",
          "refusals", "blocked", "tool_tokens", "text_tokens", "passed", "task_runs",
    "passed_at_end", "criteria", "criteria_met")  # fmt: skip
RATES = ("success_rate", "completion_rate", "first_attempt_rate", "mismatch_rate", "pass_rate",
         "end_pass_rate", "criteria_met_rate")  # fmt: skip
DIFFERENCES = ("gate_minus_single_query", "gate_minus_unstructured")
FORMATS: dict[str, Callable[[Any], str]] = {
    **dict.fromkeys(COUNTS, _count),
    **dict.fromkeys(RATES, percent),
    "mean_attempts": number,
    **dict.fromkeys(["cost_usd", "cost_per_accepted_usd"], usd),
    **dict.fromkeys(["p50", "p95", "total_ms"], duration),
    **dict.fromkeys(["success_rate_standard_error", "standard_error"], error_points),
    **dict.fromkeys(["success_rate_interval_95", "interval_95"], percent_interval),
    **dict.fromkeys(DIFFERENCES, points),
    **dict.fromkeys([f"{key}_interval_95" for key in DIFFERENCES], points_interval),
    **dict.fromkeys(["input_tokens_per_accepted", "output_tokens_per_accepted"], _tokens),
    "attempts_histogram": attempts_counts,
    "unattributed_usage": unattributed,
    "grader_usage": grader,
    "histogram": time_bins,
    "missing": _listed,
    "duplicates": _listed,
    "unplanned": _listed,
    "verdicts": lambda counts: ", ".join(f"{name} {n}" for name, n in counts.items()) or MISSING,
}
"""How the table writes each figure, by its key."""
PER_MODE = {"success_rate", "runs", "accepted", "standard_error", "interval_95"}
"""Keys of a mode comparison row that hold a figure per mode."""
PER_MODE_CHECK = {"end_pass_rate", "task_runs", "passed_at_end", "standard_error", "interval_95"}
"""Keys of a check comparison row that hold a figure per mode."""


def table_rows(text: str) -> Rows:
    """The body rows of every table in ``text``, each with its table's title."""
    rows: Rows = []
    title = ""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("│"):
            rows.append((title, [cell.strip() for cell in stripped.strip("│").split("│")]))
        elif stripped and stripped[0] not in "┏┃┡└":
            title = stripped
    return rows


def shown(value: str, cells: list[str]) -> bool:
    """Whether ``value`` is a cell, or a whole part of one (``400`` of ``400/560``)."""
    if value == MISSING:
        return value in cells
    pattern = re.compile(rf"(?<![\w.]){re.escape(value)}(?![\w.])")
    return any(pattern.search(cell) for cell in cells)


def figures(node: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """(key, value) of every figure of a JSON object, nested time figures included."""
    for key, value in node.items():
        if key in NOT_FIGURES or key in ("phases", "subagents"):
            continue
        if key in ("duration_ms", "time_to_completion_ms", "overhead") and isinstance(value, dict):
            yield from figures(value)
        else:
            yield key, value


def formatted(key: str, value: Any) -> str:
    assert key in FORMATS, (
        f"the JSON field {key!r} has no format here: show it in the table (metrics/render.py) "
        "and add how it reads to FORMATS, or list it in NOT_FIGURES if it is no figure"
    )
    return FORMATS[key](value)


def check(where: str, node: dict[str, Any], cells: list[str]) -> list[str]:
    """What of ``node``'s figures is not among ``cells``."""
    return [
        f"{where}.{key} = {value!r} ({formatted(key, value)!r})"
        for key, value in figures(node)
        if not shown(formatted(key, value), cells)
    ]


def cells_of(rows: Rows, title: Callable[[str], bool], *first: str) -> list[str]:
    """Every cell of the rows in tables whose title passes ``title`` and that start with
    ``first``."""
    found = [
        cell
        for of, cells in rows
        if title(of) and cells[: len(first)] == list(first)
        for cell in cells
    ]
    assert found, f"no row starting {first} in the tables"
    return found


def missing_figures(summary: dict[str, Any], text: str) -> list[str]:
    """Every figure of ``summary`` (as JSON) that ``text`` (the table) does not show."""
    rows, lost = table_rows(text), []
    totals = text.splitlines()[0]
    lost += [f"top.{k}" for k in ("runs", "lines") if f"{summary[k]} " not in totals]
    if summary["skipped_lines"]:
        lost += [] if f"{summary['skipped_lines']} corrupt" in totals else ["top.skipped_lines"]
    lost += [warning for warning in summary["warnings"] if warning not in text]
    for group in summary["groups"]:
        names = [str(group["task"] or "all"), str(group["mode"] or "all")]
        lost += check(f"group {names}", group, cells_of(rows, _starts("Runs"), *names))
        label = " / ".join(str(p) for p in (group["task"], group["mode"]) if p is not None)
        for phase in group["phases"]:
            cells = cells_of(rows, _starts(f"{label}: phases"), phase_label(phase))
            lost += check(f"group {names} phase {phase['index']}", phase, cells)
        owners = [("all", group), *((str(p["index"]), p) for p in group["phases"])]
        for phase_name, owner in owners:
            for row in owner["subagents"]:
                cells = cells_of(rows, _starts("Subagents"), *names, phase_name, row["type"])
                lost += [f"group {names} {phase_name} subagents {row}"] * (
                    not (shown(str(row["calls"]), cells) and shown(str(row["errors"]), cells))
                )
    comparison = summary["mode_comparison"]
    pooled = summary["pooled_comparison"]
    pooled_name = "all tasks" if len(comparison) > 1 else str(comparison[0]["task"])
    for row in [*comparison, *([pooled] if pooled else [])]:
        task = pooled_name if row["task"] is None else str(row["task"])
        overall = {k: v for k, v in row.items() if k not in PER_MODE}
        cells = cells_of(rows, _starts("Modes compared (success rate)"), task)
        lost += check(f"comparison {task}", overall, cells)
        for mode in row["runs"]:
            per_mode = {key: row[key][mode] for key in PER_MODE}
            cells = cells_of(rows, _starts("Modes compared: each mode"), task, mode)
            lost += check(f"comparison {task} {mode}", per_mode, cells)
    lost += _missing_check_figures(summary, rows)
    batch = summary.get("batch")
    if batch is not None:
        for directory in batch["directories"]:
            cells = cells_of(rows, _starts("Batch directories"), directory["path"])
            lost += check(f"directory {directory['path']}", directory, cells)
        measures = [cells[1] for title, cells in rows if title == "Batch"]
        top = {k: v for k, v in batch.items() if k != "directories"}
        lost += check("batch", top, measures)
    return lost


def _missing_check_figures(summary: dict[str, Any], rows: Rows) -> list[str]:
    """What of the checks' rows and their comparison the tables do not show."""
    lost = [] if summary["checks_unlisted"] == 0 else ["top.checks_unlisted"]
    for row in summary["checks"]:
        names = [str(row["task"] or "all"), str(row["mode"] or "all"), check_phase(row),
                 row["description"]]  # fmt: skip
        lost += check(f"check {names}", row, cells_of(rows, _starts("Checks the gate"), *names))
    for row in summary["check_comparison"]:
        names = [row["task"], check_phase(row), row["description"]]
        overall = {k: v for k, v in row.items() if k not in PER_MODE_CHECK}
        cells = cells_of(rows, _starts("Checks compared (passing"), *names)
        lost += check(f"check comparison {names}", overall, cells)
        for mode in row["task_runs"]:
            per_mode = {key: row[key][mode] for key in PER_MODE_CHECK}
            cells = cells_of(rows, _starts("Checks compared: each mode"), *names, mode)
            lost += check(f"check comparison {names} {mode}", per_mode, cells)
    return lost


def _starts(prefix: str) -> Callable[[str], bool]:
    return lambda title: title.startswith(prefix)


def checked_runs() -> list[str]:
    """Runs of a task with a phase check and a check of its own, in two modes."""
    log = LogWriter()
    for n, (mode, passed) in enumerate([("gate", True), ("gate", False), ("single-query", False)]):
        phase = {
            "name": "edit",
            "status": "accepted",
            "attempts": 1,
            "claim_s": 5,
            "gate_s": 6,
            "checks": [{"at": 5, "passed": passed, "ms": 1200 + n, "description": "tests"}],
        }
        log.run(f"c{n}", mode, [phase], verdict="accepted", attempts=1, task="checked",
                checks=[{"at": 7, "passed": True, "ms": 90, "description": "lint",
                         "kind": "said"}])  # fmt: skip
    return log.lines


def log_summary(by: GroupBy) -> dict[str, Any]:
    aggregator = LogAggregator()
    aggregator.add_lines(synthetic_log_lines(600, seed=5))
    aggregator.add_lines(checked_runs())
    aggregator.add_line(b"not json")  # a corrupt line, counted in the totals
    return summarize(aggregator, by, warnings=["a.jsonl.gz: damaged gzip stream"])


@pytest.mark.parametrize("by", ["phase", "task", "mode"])
def test_every_figure_of_a_logs_json_report_is_in_its_table(by: GroupBy) -> None:
    summary = log_summary(by)
    assert len(summary["mode_comparison"]) > 1 and summary["skipped_lines"] == 1

    lost = missing_figures(summary, render_table(summary, width=1000))

    assert lost == []


def test_every_figure_of_a_batch_report_is_in_its_table(tmp_path: Path) -> None:
    """A batch directory of one task in two modes: the batch section's figures too."""
    out = tmp_path / "out"
    units = [make_unit("fix", "gate", 1), make_unit("fix", "single-query", 1)]
    write_manifest(out, [*units, make_unit("fix", "unstructured", 1)])
    for unit, script in zip(units, (LAZY, GOOD), strict=True):
        run_into(out, unit, script, cost_usd=0.25)
    collected = collect_batches([out])
    aggregator = LogAggregator()
    collected.aggregate(aggregator)
    summary = {**summarize(aggregator, warnings=collected.warnings), "batch": collected.section()}
    assert summary["batch"]["missing"]

    lost = missing_figures(summary, render_table(summary, width=1000))

    assert lost == []


def test_a_figure_the_table_does_not_show_is_found() -> None:
    """The check itself: a group's figure dropped from the table, or a new field, fails."""
    summary = log_summary("phase")
    text = render_table(summary, width=1000)
    group = summary["groups"][0]
    changed = {**summary, "groups": [{**group, "errors": 987654}, *summary["groups"][1:]]}

    assert any(".errors = 987654" in lost for lost in missing_figures(changed, text))
    added = {**summary, "groups": [{**group, "new_figure": 1}, *summary["groups"][1:]]}
    with pytest.raises(AssertionError, match="'new_figure' has no format here"):
        missing_figures(added, text)


def test_a_check_figure_the_table_does_not_show_is_found() -> None:
    """The checks' rows and their comparison are held to it too."""
    summary = log_summary("phase")
    assert summary["checks"] and summary["check_comparison"]
    text = render_table(summary, width=1000)
    check_row, compared = summary["checks"][0], summary["check_comparison"][0]

    changed = {**summary, "checks": [{**check_row, "total_ms": 987654}, *summary["checks"][1:]]}
    assert any(".total_ms = 987654" in lost for lost in missing_figures(changed, text))
    per_mode = {**compared["task_runs"], "gate": 987654}
    changed = {**summary, "check_comparison": [{**compared, "task_runs": per_mode}]}
    assert any(".task_runs = 987654" in lost for lost in missing_figures(changed, text))
