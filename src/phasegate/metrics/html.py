"""The ``html`` report: one self-contained page of tables and inline SVG charts.

Nothing is fetched: the CSS is inline, the four charts are SVG drawn here in Python (no
script), and the page's Content-Security-Policy forbids every fetch and every script, so it
reads the same offline, as a CI artifact or a mail attachment. Task, mode and phase names come
from the log and are escaped wherever they appear: a log is not trusted.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from phasegate.metrics.formatting import (
    APPROXIMATE_LEGEND,
    MODE_COLUMNS,
    PHASE_COLUMNS,
    SUBAGENT_COLUMNS,
    batch_tables,
    check_sections,
    checks_unlisted,
    comparison_rows,
    duration,
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
    phase_label,
    phase_name,
    quantity,
    recordings_unlisted,
    subagent_rows,
    unattributed,
    usd,
)
from phasegate.metrics.svg import PALETTE, Bar, Segment, column_chart, row_chart

CHARTS = ("completion-rate", "attempts", "time-to-completion", "mode-comparison")
"""The ``data-chart`` value of each chart, in page order."""
_MODE_COLOURS = {
    "gate": PALETTE[0], "single-query": PALETTE[1], "unstructured": PALETTE[2], "judge": PALETTE[3],
}  # fmt: skip
_ALL_MODES = "#8c8c8c"
_PERCENT_TICKS = (0.0, 0.25, 0.5, 0.75, 1.0)
_CSP = "default-src 'none'; style-src 'unsafe-inline'"
_STYLE = """
body { font-family: system-ui, sans-serif; margin: 24px; color: #222; background: #f6f7f9;
       line-height: 1.4; }
h1 { margin: 0 0 12px; }
.totals { display: flex; flex-wrap: wrap; gap: 12px; margin: 0 0 16px; }
.totals div, figure { background: #fff; border: 1px solid #dde1e6; border-radius: 6px; }
.totals div { padding: 6px 14px; }
.totals dt { font-size: 12px; color: #666; }
.totals dd { margin: 0; font-size: 20px; font-weight: 600; }
.warnings { color: #8a4b00; }
.charts { display: grid; gap: 16px;
          grid-template-columns: repeat(auto-fit, minmax(min(100%, 720px), 1fr)); }
figure { margin: 0; padding: 8px; min-width: 0; }
svg.chart { display: block; width: 100%; height: auto; }
table { border-collapse: collapse; background: #fff; margin: 8px 0 16px; font-size: 14px; }
th, td { border: 1px solid #dde1e6; padding: 4px 10px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th { background: #eef0f3; }
"""


def render_html(summary: dict[str, Any], *, base: Path | None = None) -> str:
    """``summarize()``'s output as one HTML document that needs nothing else to display; the
    recorded runs link to their pages (relative to ``base``, the page's folder, when given)."""
    groups = summary["groups"]
    comparison = summary["mode_comparison"]
    charts = (_completion_chart(groups), _attempts_chart(groups), _time_chart(groups),
              _mode_chart(comparison))  # fmt: skip
    figures = "".join(f"<figure>{chart}</figure>" for chart in charts)
    sections = "".join(_group_section(group) for group in groups)
    trend = _trend_section(summary)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{_CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>phasegate report</title>
<style>{_STYLE}</style>
</head>
<body>
<h1>phasegate report</h1>
{_totals(summary)}
{_batch_section(summary.get("batch"))}
<h2>Charts</h2>
<div class="charts">{figures}</div>
{trend}
{_comparison_table(summary)}
<h2>Groups</h2>
{sections or '<p class="empty">No runs in the log.</p>'}
{_checks_section(summary)}
{_subagents_section(summary)}
{_recordings_section(summary, base)}
</body>
</html>
"""


# -- charts ---------------------------------------------------------------------------------
def _completion_chart(groups: list[dict[str, Any]]) -> str:
    bars = []
    for group in groups:
        for phase in group["phases"]:
            rate = phase["completion_rate"]
            if rate is None:  # failed tool calls seen, but no phase.completed: no rate
                continue
            label = f"{group_label(group)} · {phase_label(phase)}"
            tip = f"{label}: {percent(rate)} completed, {quantity(phase['runs'], 'run')}"
            bars.append(Bar(label, (Segment(rate, _mode_colour(group["mode"]), tip),)))
    modes = dict.fromkeys(group["mode"] for group in groups)
    legend = [(mode or "all modes", _mode_colour(mode)) for mode in modes]
    return row_chart("completion-rate", "Completion rate per phase", bars,
                     x_label="phases accepted (% of runs)", ticks=_PERCENT_TICKS,
                     tick_label=percent, legend=legend)  # fmt: skip


def _attempts_chart(groups: list[dict[str, Any]]) -> str:
    counts: dict[int, int] = {}
    for group in groups:
        for attempts, runs in group["attempts_histogram"].items():
            counts[int(attempts)] = counts.get(int(attempts), 0) + runs
    # A histogram shows its empty values too, unless a stray huge count would make it unreadable.
    dense = bool(counts) and max(counts) - min(counts) <= 30
    keys = range(min(counts), max(counts) + 1) if dense else sorted(counts)
    bars = []
    for k in keys:
        runs = counts.get(k, 0)
        tip = f"{quantity(k, 'attempt')}: {quantity(runs, 'run')}"
        bars.append(Bar(str(k), (Segment(runs, PALETTE[0], tip),)))
    return column_chart("attempts", "Attempts per run", bars,
                        x_label="gate checks in the run", y_label="runs")  # fmt: skip


def _time_chart(groups: list[dict[str, Any]]) -> str:
    """Phases of the same name (across tasks and modes) stack in one colour."""
    per_name: dict[str, dict[float, int]] = {}
    for group in groups:
        for phase in group["phases"]:
            counts = per_name.setdefault(phase_name(phase), {})
            for bin_ in phase["time_to_completion_ms"]["histogram"]:
                counts[bin_["from_ms"]] = counts.get(bin_["from_ms"], 0) + bin_["count"]
    per_name = {name: counts for name, counts in per_name.items() if any(counts.values())}
    colours = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(per_name)}
    starts = sorted({start for counts in per_name.values() for start in counts})
    bars = []
    for i, start in enumerate(starts):
        span = _span(start, starts[i + 1] if i + 1 < len(starts) else None)
        segments = []
        for name, counts in per_name.items():
            done = counts.get(start, 0)
            segments.append(Segment(done, colours[name], f"{name}, {span}: {done} completed"))
        bars.append(Bar(span, tuple(segments)))
    return column_chart("time-to-completion", "Time to phase completion", bars,
                        x_label="time from the run's start to the phase's completion",
                        y_label="phases completed", legend=list(colours.items()))  # fmt: skip


def _mode_chart(comparison: list[dict[str, Any]]) -> str:
    bars, modes = [], []
    for row in comparison:
        for mode, rate in row["success_rate"].items():
            label = f"{row['task']} · {mode}"
            tip = f"{label}: {percent(rate)} of runs accepted"
            bars.append(Bar(label, (Segment(rate, _mode_colour(mode), tip),)))
            modes += [mode] if mode not in modes else []
    return row_chart("mode-comparison", "Success rate by mode, per task", bars,
                     x_label="runs accepted (%)", ticks=_PERCENT_TICKS, tick_label=percent,
                     legend=[(mode, _mode_colour(mode)) for mode in modes])  # fmt: skip


# -- tables ---------------------------------------------------------------------------------
def _totals(summary: dict[str, Any]) -> str:
    items = (("runs", summary["runs"]), ("log lines", summary["lines"]),
             ("skipped lines", summary["skipped_lines"]),
             ("grouped by", summary["by"]))  # fmt: skip
    cells = "".join(f"<div><dt>{name}</dt><dd>{escape(str(v))}</dd></div>" for name, v in items)
    warnings = "".join(f"<li>{escape(warning)}</li>" for warning in summary["warnings"])
    notes = f'<ul class="warnings">{warnings}</ul>' if warnings else ""
    legend = f"<p>{escape(APPROXIMATE_LEGEND)}</p>" if has_approximate(summary) else ""
    return f'<dl class="totals">{cells}</dl>{notes}{legend}'


def _group_section(group: dict[str, Any]) -> str:
    run_time = group["duration_ms"]
    numbers = [
        ("runs", group["runs"]), ("accepted", group["accepted"]), ("errors", group["errors"]),
        ("success rate", percent(group["success_rate"])),
        ("standard error", error_points(group.get("success_rate_standard_error"))),
        ("95 % interval", percent_interval(group.get("success_rate_interval_95"))),
        ("first-attempt rate", percent(group["first_attempt_rate"])),
        ("mean attempts", number(group["mean_attempts"])), ("tool errors", group["tool_errors"]),
        ("refused calls", group["refusals"]),
        ("blocked by the sandbox", group["blocked"]),
        ("mismatch rate", percent(group["mismatch_rate"])),
        ("tokens in / out", f"{group['input_tokens']} / {group['output_tokens']}"),
        ("cost", usd(group["cost_usd"])),
        ("tokens in / out and cost in no phase", unattributed(group["unattributed_usage"])),
        ("tokens in / out and cost of the grader", grader(group["grader_usage"])),
        ("cost per accepted run", usd(group.get("cost_per_accepted_usd"))),
        ("input carried and the gate's share", overhead(group["overhead"])),
        ("tokens in / out per accepted run", per_accepted_tokens(group).replace("/", " / ")),
        ("run time p50 / p95",
         f"{percentile(run_time, 'p50')} / {percentile(run_time, 'p95')}"),
    ]  # fmt: skip
    phases = [
        [
            *phase_cells(p),
            f"{p['input_tokens']} / {p['output_tokens']}",
            usd(p["cost_usd"]),
            grader(p["grader_usage"]),
            overhead(p["overhead"]),
        ]
        for p in group["phases"]
    ]
    head = (*PHASE_COLUMNS, "tokens in / out", "cost", "grader", "input and the gate's share")
    phase_table = _table(head, phases) if phases else ""
    numbers_table = _table(("measure", "value"), [list(row) for row in numbers])
    heading = escape(group_label(group) or "all runs")
    return f'<section class="group"><h3>{heading}</h3>{numbers_table}{phase_table}</section>'


def _trend_section(summary: dict[str, Any]) -> str:
    """A trend's charts, one per figure, and its tables (every figure the charts draw)."""
    from phasegate.metrics.trends import trend_charts, trend_sections

    if "periods" not in summary:
        return ""
    figures = "".join(f"<figure>{chart}</figure>" for chart in trend_charts(summary))
    tables = "".join(f"<h3>{escape(title)}</h3>{_table(columns, rows)}"
                     for title, columns, rows in trend_sections(summary))  # fmt: skip
    title = f"Over time: by {summary['over']} ({summary['tz']})"
    return f'<h2>{escape(title)}</h2>\n<div class="charts">{figures}</div>\n{tables}'


def _comparison_table(summary: dict[str, Any]) -> str:
    if not summary["mode_comparison"]:
        return ""
    rows = comparison_rows(summary)
    return f"<h2>Modes compared (success rate)</h2>{_table(MODE_COLUMNS, rows)}"


def _batch_section(batch: dict[str, Any] | None) -> str:
    """The batch's directories and totals (paths and unit ids are escaped in the cells)."""
    if batch is None:
        return ""
    tables = "".join(
        f"<h3>{escape(title)}</h3>{_table(columns, [list(row) for row in rows])}"
        for title, columns, rows in batch_tables(batch)
    )
    return f'<section class="batch"><h2>Batch</h2>{tables}</section>'


def _checks_section(summary: dict[str, Any]) -> str:
    """The checks the gate ran (descriptions came from the log: escaped in the cells), and the
    modes compared on them."""
    sections = check_sections(summary)
    if not sections:
        return ""
    tables = "".join(
        f"<h3>{escape(title)}</h3>{_table(columns, [list(row) for row in rows])}"
        for title, columns, rows in sections
    )
    more = checks_unlisted(summary)
    note = f"<p>{escape(more)}</p>" if more else ""
    return (
        "<section class=\"checks\"><h2>Checks</h2><p>A check's time is the gate's: it is not "
        f"in any time to completion.</p>{tables}{note}</section>"
    )


def _subagents_section(summary: dict[str, Any]) -> str:
    """Calls subagents made, by type: part of the groups' and phases' figures."""
    rows = subagent_rows(summary)
    if not rows:
        return ""
    return (
        '<section class="subagents"><h2>Subagents</h2><p>Their calls are part of the figures '
        f"above.</p>{_table(SUBAGENT_COLUMNS, [list(row) for row in rows])}</section>"
    )


def _recordings_section(summary: dict[str, Any], base: Path | None) -> str:
    """The recorded runs, each a link to its page (the path escaped, the URL encoded)."""
    runs = summary.get("recordings")
    if not runs:
        return ""
    rows = "".join(
        f'<tr><td><a href="{escape(page_href(str(run["page"]), base))}">'
        f"{escape(str(run['run_id']))}</a></td><td>{escape(str(run['task']))}</td>"
        f"<td>{escape(str(run['mode']))}</td><td>{escape(str(run['verdict']))}</td></tr>"
        for run in runs
    )
    more = recordings_unlisted(summary)
    note = f"<p>{escape(more)}</p>" if more else ""
    head = "<tr><th>run (its page)</th><th>task</th><th>mode</th><th>verdict</th></tr>"
    return (f'<section class="recordings"><h2>Recorded runs</h2><table><thead>{head}</thead>'
            f"<tbody>{rows}</tbody></table>{note}</section>")  # fmt: skip


def _table(head: tuple[str, ...], rows: list[list[Any]]) -> str:
    header = "".join(f"<th>{escape(column)}</th>" for column in head)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(str(cell))}</td>" for cell in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>"


# -- words and numbers ----------------------------------------------------------------------
def _mode_colour(mode: str | None) -> str:
    return _MODE_COLOURS.get(mode or "", _ALL_MODES)


def _span(low: float, high: float | None) -> str:
    """A histogram bin's label; its unit is said once when both ends share it."""
    if high is None:
        return f"≥ {duration(low)}"
    (a, unit_a), b = duration(low).split(), duration(high)
    return f"{a}–{b}" if b.endswith(f" {unit_a}") else f"{a} {unit_a}–{b}"
