"""The report as text: a rich table for terminals, Markdown for a GitHub job summary, JSON."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any, Literal

from phasegate.metrics.formatting import (
    APPROXIMATE_LEGEND,
    MODE_COLUMNS,
    MODE_DETAIL_COLUMNS,
    PHASE_COLUMNS,
    PHASE_USAGE_COLUMNS,
    RECORDING_COLUMNS,
    SUBAGENT_COLUMNS,
    attempts_counts,
    batch_tables,
    check_sections,
    checks_unlisted,
    comparison_detail_rows,
    comparison_rows,
    error_points,
    grader,
    group_label,
    has_approximate,
    number,
    overhead,
    page_href,
    per_accepted_tokens,
    percent,
    percent_interval,
    percentile,
    phase_cells,
    phase_usage_cells,
    quantity,
    recording_rows,
    recordings_unlisted,
    subagent_rows,
    unattributed,
    usd,
)
from phasegate.metrics.trends import trend_sections

ReportFormat = Literal["table", "json", "markdown", "html"]
"""The formats a report is written in."""


def render_json(summary: dict[str, Any]) -> str:
    """The summary as indented JSON."""
    return json.dumps(summary, indent=2, ensure_ascii=False) + "\n"


def render_summary(
    summary: dict[str, Any], output_format: ReportFormat, *, color: bool, base: Path | None = None
) -> str:
    """``summary`` in ``output_format`` (``color``: terminal colours, for ``table``; ``base``:
    the folder the report is written in, so that links to recorded runs' pages are relative
    to it)."""
    if output_format == "html":
        from phasegate.metrics.html import render_html

        return render_html(summary, base=base)
    if output_format == "json":
        return render_json(summary)
    if output_format == "markdown":
        return render_markdown(summary, base=base)
    return render_table(summary, color=color)


RUN_COLUMNS = ("task", "mode", "runs", "accepted", "errors", "success", "± se", "95 % interval",
               "mismatch")  # fmt: skip
RUN_ATTEMPT_COLUMNS = ("task", "mode", "1st attempt", "mean attempts", "attempts×runs",
                       "tool errors", "refused calls", "blocked", "p50 run",
                       "p95 run")  # fmt: skip
RUN_USAGE_COLUMNS = ("task", "mode", "tokens in/out", "cost", "in no phase", "grader",
                     "tokens in/out / accepted", "cost / accepted",
                     "input and the gate's share")  # fmt: skip
_TEXT_COLUMNS = {"task", "mode", "phase", "run", "verdict", "page", "directory", "batch", "shard",
                 "measure", "value", "subagent type", "check",
                 "attempts×runs", "time to complete (runs)", "in no phase", "grader",
                 "criteria met",
                 "input and the gate's share", "period"}  # fmt: skip


def _sections(summary: dict[str, Any]) -> list[tuple[str, tuple[str, ...], list[list[str]]]]:
    """(title, columns, rows) of every table in the report, in order: every figure of the
    JSON is in one of them (the runs and the mode comparison take more than one table, so
    each stays narrow enough to read)."""
    groups = summary["groups"]
    batch = summary.get("batch")
    sections = batch_tables(batch) if batch is not None else []
    sections += [
        ("Runs", RUN_COLUMNS, [_run_cells(group) for group in groups]),
        ("Runs: attempts and time", RUN_ATTEMPT_COLUMNS, [_attempt_cells(g) for g in groups]),
        ("Runs: tokens and cost", RUN_USAGE_COLUMNS, [_usage_cells(group) for group in groups]),
    ]
    for group in (group for group in groups if group["phases"]):
        label = group_label(group)
        sections += [
            (f"{label}: phases", PHASE_COLUMNS, [phase_cells(p) for p in group["phases"]]),
            (f"{label}: phases, tokens and cost", PHASE_USAGE_COLUMNS,
             [phase_usage_cells(p) for p in group["phases"]]),
        ]  # fmt: skip
    if summary["mode_comparison"]:
        sections += [
            ("Modes compared (success rate)", MODE_COLUMNS, comparison_rows(summary)),
            ("Modes compared: each mode", MODE_DETAIL_COLUMNS, comparison_detail_rows(summary)),
        ]
    sections += check_sections(summary)
    delegated = subagent_rows(summary)
    if delegated:
        sections.append(("Subagents (their calls are part of the figures above)",
                         SUBAGENT_COLUMNS, delegated))  # fmt: skip
    if summary.get("recordings"):
        sections.append(("Recorded runs", RECORDING_COLUMNS, recording_rows(summary)))
    return sections + trend_sections(summary)


def render_markdown(summary: dict[str, Any], *, base: Path | None = None) -> str:
    """GitHub-flavoured Markdown (ready for a job summary): one table per section; a recorded
    run's page is a link (relative to ``base``, the report's folder, when given)."""
    out = [f"## phasegate report\n\n{_totals(summary)}\n"]
    out.extend(f"\n- **Warning:** {_md(warning)}" for warning in summary["warnings"])
    out.append("\n" if summary["warnings"] else "")
    for title, columns, rows in _sections(summary):
        align = ["---" if c in _TEXT_COLUMNS else "---:" for c in columns]
        out.append(f"\n### {_md(title)}\n\n| {' | '.join(columns)} |\n| {' | '.join(align)} |\n")
        linked = columns == RECORDING_COLUMNS
        for row in rows:
            cells = [_md(cell) for cell in row]
            if linked:
                label = cells[0].replace("[", "\\[").replace("]", "\\]")
                cells[-1] = f"[{label}]({page_href(row[-1], base)})"
            out.append("| " + " | ".join(cells) + " |\n")
    for more in (checks_unlisted(summary), recordings_unlisted(summary)):
        if more is not None:
            out.append(f"\n{_md(more)}\n")
    return "".join(out)


def render_table(summary: dict[str, Any], *, width: int | None = None, color: bool = False) -> str:
    """Tables drawn with rich, for a terminal: ``width`` columns (default: the terminal's, or
    ``COLUMNS``, else 120). A cell that does not fit is folded onto more lines, never cut
    short: every figure stays whole."""
    # Imported here: the other formats (and `phasegate report --format json`) do without.
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    buffer = io.StringIO()
    if width is None:
        width = shutil.get_terminal_size((120, 24)).columns
    console = Console(file=buffer, width=width, color_system="auto" if color else None)
    console.print(_totals(summary), markup=False)
    for warning in summary["warnings"]:
        console.print(f"Warning: {warning}", markup=False)
    for title, columns, rows in _sections(summary):
        table = Table(title=title)
        for column in columns:
            table.add_column(
                column, justify="left" if column in _TEXT_COLUMNS else "right", overflow="fold"
            )
        for row in rows:
            table.add_row(*(Text(cell) for cell in row))
        console.print(table)
    for more in (checks_unlisted(summary), recordings_unlisted(summary)):
        if more is not None:
            console.print(more, markup=False)
    return buffer.getvalue()


def _totals(summary: dict[str, Any]) -> str:
    skipped = summary["skipped_lines"]
    note = f", {quantity(skipped, 'corrupt line')} skipped" if skipped else ""
    runs, lines = quantity(summary["runs"], "run"), quantity(summary["lines"], "log line")
    legend = f" {APPROXIMATE_LEGEND}" if has_approximate(summary) else ""
    return f"{runs} from {lines}{note}.{legend}"


def _names(group: dict[str, Any]) -> list[str]:
    return [str(group["task"] or "all"), str(group["mode"] or "all")]


def _run_cells(group: dict[str, Any]) -> list[str]:
    return [
        *_names(group),
        str(group["runs"]),
        str(group["accepted"]),
        str(group["errors"]),
        percent(group["success_rate"]),
        error_points(group.get("success_rate_standard_error")),
        percent_interval(group.get("success_rate_interval_95")),
        percent(group["mismatch_rate"]),
    ]


def _attempt_cells(group: dict[str, Any]) -> list[str]:
    return [
        *_names(group),
        percent(group["first_attempt_rate"]),
        number(group["mean_attempts"]),
        attempts_counts(group["attempts_histogram"]),
        str(group["tool_errors"]),
        str(group["refusals"]),
        str(group["blocked"]),
        percentile(group["duration_ms"], "p50"),
        percentile(group["duration_ms"], "p95"),
    ]


def _usage_cells(group: dict[str, Any]) -> list[str]:
    return [
        *_names(group),
        f"{group['input_tokens']}/{group['output_tokens']}",
        usd(group["cost_usd"]),
        unattributed(group["unattributed_usage"]),
        grader(group["grader_usage"]),
        per_accepted_tokens(group),
        usd(group.get("cost_per_accepted_usd")),
        overhead(group["overhead"]),
    ]


def _md(cell: str) -> str:
    """A table cell safe for Markdown: no pipes or line breaks from log text."""
    return cell.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
