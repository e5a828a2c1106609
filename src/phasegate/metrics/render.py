"""The report as text: a rich table for terminals, Markdown for a GitHub job summary, JSON."""

from __future__ import annotations

import io
import json
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from phasegate.metrics.formatting import duration, number, percent, points


def render_json(summary: dict[str, Any]) -> str:
    """The summary as indented JSON."""
    return json.dumps(summary, indent=2, ensure_ascii=False) + "\n"


RUN_COLUMNS = ("task", "mode", "runs", "success", "1st attempt", "mean attempts",
               "tool errors", "mismatch", "p50 run", "tokens in/out", "cost")  # fmt: skip
PHASE_COLUMNS = ("phase", "runs", "completed", "1st attempt", "mean attempts",
                 "p50 to complete", "p95 to complete", "tool errors")  # fmt: skip
MODE_COLUMNS = ("task", "gate", "single-query", "unstructured", "gate − single-query",
                "gate − unstructured")  # fmt: skip
_TEXT_COLUMNS = {"task", "mode", "phase"}


def _sections(summary: dict[str, Any]) -> list[tuple[str, tuple[str, ...], list[list[str]]]]:
    """(title, columns, rows) of every table in the report, in order."""
    groups = summary["groups"]
    sections: list[tuple[str, tuple[str, ...], list[list[str]]]] = [
        ("Runs", RUN_COLUMNS, [_run_cells(group) for group in groups])
    ]
    sections += [
        (f"{_label(group)}: phases", PHASE_COLUMNS, [_phase_cells(p) for p in group["phases"]])
        for group in groups
        if group["phases"]
    ]
    if summary["mode_comparison"]:
        rows = [_comparison_cells(row) for row in summary["mode_comparison"]]
        sections.append(("Modes compared (success rate)", MODE_COLUMNS, rows))
    return sections


def render_markdown(summary: dict[str, Any]) -> str:
    """GitHub-flavoured Markdown (ready for a job summary): one table per section."""
    out = [f"## phasegate report\n\n{_totals(summary)}\n"]
    for title, columns, rows in _sections(summary):
        align = ["---" if c in _TEXT_COLUMNS else "---:" for c in columns]
        out.append(f"\n### {_md(title)}\n\n| {' | '.join(columns)} |\n| {' | '.join(align)} |\n")
        out.extend("| " + " | ".join(_md(cell) for cell in row) + " |\n" for row in rows)
    return "".join(out)


def render_table(summary: dict[str, Any], *, width: int = 120, color: bool = False) -> str:
    """Tables drawn with rich, for a terminal."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, color_system="auto" if color else None)
    console.print(_totals(summary), markup=False)
    for title, columns, rows in _sections(summary):
        table = Table(title=title)
        for column in columns:
            table.add_column(column, justify="left" if column in _TEXT_COLUMNS else "right")
        for row in rows:
            table.add_row(*(Text(cell) for cell in row))
        console.print(table)
    return buffer.getvalue()


def _totals(summary: dict[str, Any]) -> str:
    skipped = summary["skipped_lines"]
    note = f", {skipped} corrupt line(s) skipped" if skipped else ""
    return f"{summary['runs']} run(s) from {summary['lines']} log line(s){note}."


def _label(group: dict[str, Any]) -> str:
    return " / ".join(str(part) for part in (group["task"], group["mode"]) if part is not None)


def _run_cells(group: dict[str, Any]) -> list[str]:
    return [
        str(group["task"] or "all"),
        str(group["mode"] or "all"),
        str(group["runs"]),
        percent(group["success_rate"]),
        percent(group["first_attempt_rate"]),
        number(group["mean_attempts"]),
        str(group["tool_errors"]),
        percent(group["mismatch_rate"]),
        duration(group["duration_ms"]["p50"]),
        f"{group['input_tokens']}/{group['output_tokens']}",
        f"${group['cost_usd']:.4f}",
    ]


def _phase_cells(phase: dict[str, Any]) -> list[str]:
    times = phase["time_to_completion_ms"]
    return [
        f"{phase['index']} {phase['name'] or ''}".strip(),
        str(phase["runs"]),
        percent(phase["completion_rate"]),
        percent(phase["first_attempt_rate"]),
        number(phase["mean_attempts"]),
        duration(times["p50"]),
        duration(times["p95"]),
        str(phase["tool_errors"]),
    ]


def _comparison_cells(row: dict[str, Any]) -> list[str]:
    rates = row["success_rate"]
    return [
        str(row["task"]),
        percent(rates.get("gate")),
        percent(rates.get("single-query")),
        percent(rates.get("unstructured")),
        points(row["gate_minus_single_query"]),
        points(row["gate_minus_unstructured"]),
    ]


def _md(cell: str) -> str:
    """A table cell safe for Markdown: no pipes or line breaks from log text."""
    return cell.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
