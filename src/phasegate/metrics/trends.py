"""A trend's periods as report sections: tables (terminal and Markdown) and SVG charts (HTML).

The tables carry every figure the charts draw, one row per period and group, an empty period
as one row of dashes with 0 runs; the charts draw each period's ``total`` (its figures over
every group): runs, success and first-try rates with their 95 % intervals, mean attempts,
refused calls, tokens, cost and the p50/p95 run time. An empty period is a gap in a line and
an empty column, never left out.
"""

from __future__ import annotations

from typing import Any

from phasegate.metrics.formatting import number, percent, percent_interval, percentile, usd
from phasegate.metrics.proportions import wilson_interval
from phasegate.metrics.svg import PALETTE, Bar, Point, Segment, column_chart, line_chart

TREND_COLUMNS = ("period", "task", "mode", "runs", "accepted", "success", "95 % interval",
                 "1st attempt", "mean attempts", "refused calls")  # fmt: skip
TREND_USAGE_COLUMNS = ("period", "task", "mode", "tokens in/out", "cost", "p50 run",
                       "p95 run")  # fmt: skip


def period_label(period: dict[str, Any], over: str) -> str:
    """A period's first day (``2026-11-23``), ``week of`` it for a week."""
    day = str(period["start"])[:10]
    return f"week of {day}" if over == "week" else day


def _rows(summary: dict[str, Any]) -> list[tuple[str, dict[str, Any] | None]]:
    """(period label, group) for every group of every period; (label, None) when empty."""
    rows: list[tuple[str, dict[str, Any] | None]] = []
    for period in summary["periods"]:
        label = period_label(period, summary["over"])
        groups = [group for group in period["groups"] if group["runs"]]
        rows.extend((label, group) for group in groups) if groups else rows.append((label, None))
    return rows


def trend_sections(summary: dict[str, Any]) -> list[tuple[str, tuple[str, ...], list[list[str]]]]:
    """The trend's tables (title, columns, rows), none without ``periods``."""
    if "periods" not in summary:
        return []
    zone = summary["tz"]
    runs, usage = [], []
    for label, group in _rows(summary):
        if group is None:
            runs.append([label, "—", "—", "0", "0", "—", "—", "—", "—", "0"])
            usage.append([label, "—", "—", "0/0", "—", "—", "—"])
            continue
        names = [str(group["task"] or "all"), str(group["mode"] or "all")]
        runs.append([label, *names, str(group["runs"]), str(group["accepted"]),
                     percent(group["success_rate"]),
                     percent_interval(group.get("success_rate_interval_95")),
                     percent(group["first_attempt_rate"]), number(group["mean_attempts"]),
                     str(group["refusals"])])  # fmt: skip
        usage.append([label, *names, f"{group['input_tokens']}/{group['output_tokens']}",
                      usd(group["cost_usd"]), percentile(group["duration_ms"], "p50"),
                      percentile(group["duration_ms"], "p95")])  # fmt: skip
    over = summary["over"]
    return [
        (f"By {over} ({zone})", TREND_COLUMNS, runs),
        (f"By {over} ({zone}): tokens, cost and time", TREND_USAGE_COLUMNS, usage),
    ]


def trend_charts(summary: dict[str, Any]) -> list[str]:
    """One SVG chart per figure over the periods, none without ``periods``."""
    if "periods" not in summary:
        return []
    periods, over = summary["periods"], summary["over"]
    labels = [period_label(period, over) for period in periods]
    totals = [period["total"] for period in periods]
    x_label = f"{over} ({summary['tz']})"

    def columns(chart: str, title: str, y_label: str, *series: tuple[str, str]) -> str:
        bars = [
            Bar(label, tuple(Segment(float(total[key] or 0), PALETTE[i], f"{label}: {name} "
                                     f"{total[key] or 0}") for i, (key, name) in enumerate(series)))
            for label, total in zip(labels, totals, strict=True)
        ]  # fmt: skip
        legend = (
            [(name, PALETTE[i]) for i, (_, name) in enumerate(series)] if len(series) > 1 else []
        )
        return column_chart(chart, title, bars, x_label=x_label, y_label=y_label, legend=legend)

    def rate(key: str, total: dict[str, Any]) -> Point | None:
        if not total["runs"] or total[key] is None:
            return None
        if key == "success_rate":
            low, high = total["success_rate_interval_95"]
        else:  # the count is the rate (to 4 decimals) times the runs
            hits = round(total[key] * total["runs"])
            low, high = wilson_interval(hits, total["runs"]) or (total[key], total[key])
        return Point(total[key], low, high)

    def value(key: str, total: dict[str, Any], scale: float = 1.0) -> Point | None:
        figure = total[key]
        return None if figure is None else Point(figure * scale)

    def duration(key: str, total: dict[str, Any]) -> Point | None:
        figure = total["duration_ms"][key]
        return None if figure is None else Point(figure / 1000)

    return [
        _runs_chart(labels, totals, x_label, over),
        line_chart("trend-rates", f"Success and first-try rates by {over} (95 % intervals)",
                   labels, [("success", PALETTE[2], [rate("success_rate", t) for t in totals]),
                            ("first try", PALETTE[0],
                             [rate("first_attempt_rate", t) for t in totals])],
                   x_label=x_label, y_label="share of runs", percent=True),
        line_chart("trend-attempts", f"Mean attempts per run by {over}", labels,
                   [("mean attempts", PALETTE[1], [value("mean_attempts", t) for t in totals])],
                   x_label=x_label, y_label="gate checks"),
        columns("trend-refusals", f"Refused tool calls by {over}", "calls",
                ("refusals", "refused calls")),
        columns("trend-tokens", f"Tokens by {over}", "tokens", ("input_tokens", "input"),
                ("output_tokens", "output")),
        line_chart("trend-cost", f"Cost by {over} (USD)", labels,
                   [("cost", PALETTE[3], [value("cost_usd", t) for t in totals])],
                   x_label=x_label, y_label="USD"),
        line_chart("trend-duration", f"Run time by {over} (seconds)", labels,
                   [("p50", PALETTE[0], [duration("p50", t) for t in totals]),
                    ("p95", PALETTE[3], [duration("p95", t) for t in totals])],
                   x_label=x_label, y_label="seconds"),
    ]  # fmt: skip


def _runs_chart(labels: list[str], totals: list[dict[str, Any]], x_label: str, over: str) -> str:
    """Runs per period, split into accepted and not accepted (they add up to the runs)."""
    bars = [
        Bar(label, (Segment(float(t["accepted"]), PALETTE[2], f"{label}: {t['accepted']} accepted"),
                    Segment(float(t["runs"] - t["accepted"]), PALETTE[3],
                            f"{label}: {t['runs'] - t['accepted']} not accepted")))
        for label, t in zip(labels, totals, strict=True)
    ]  # fmt: skip
    legend = [("accepted", PALETTE[2]), ("not accepted", PALETTE[3])]
    return column_chart("trend-runs", f"Runs by {over}", bars, x_label=x_label, y_label="runs",
                        legend=legend)  # fmt: skip
