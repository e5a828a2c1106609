"""``phasegate report --over day|week [--tz ZONE]``: the figures per period, in every format."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import phasegate
from tests.helpers.logs import LogWriter

MONDAY = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)


def _phase(status: str) -> dict[str, object]:
    return {"name": "edit", "status": status, "attempts": 1, "gate_s": 5}


@pytest.fixture
def weeks_log(tmp_path: Path) -> Path:
    """Runs on Monday 2 November (two), Wednesday 4 (one, rejected) and Tuesday 17 (one),
    and one starting at 23:59:00 UTC on Friday 6 that ends on Saturday 7 (UTC)."""
    log = LogWriter()
    log.run("a", "gate", [_phase("accepted")], verdict="accepted", attempts=1, start=MONDAY)
    log.run("b", "gate", [_phase("accepted")], verdict="accepted", attempts=1,
            start=MONDAY + timedelta(hours=2), task="docs")  # fmt: skip
    log.run("c", "gate", [_phase("rejected")], verdict="rejected", attempts=3,
            start=MONDAY + timedelta(days=2))  # fmt: skip
    log.run("d", "gate", [_phase("accepted")], verdict="accepted", attempts=1,
            start=MONDAY + timedelta(days=15))  # fmt: skip
    log.run("e", "gate", [_phase("accepted")], verdict="accepted", attempts=1,
            start=datetime(2026, 11, 6, 23, 59, tzinfo=UTC))  # fmt: skip
    path = tmp_path / "weeks.jsonl"
    path.write_text("\n".join(log.lines) + "\n")
    return path


def _json(*args: str | Path) -> dict[str, Any]:
    done = phasegate("report", *args, "--format", "json")
    assert done.returncode == 0, done.stderr
    summary: dict[str, Any] = json.loads(done.stdout)
    return summary


def test_days_in_utc_count_each_run_once_in_the_day_it_ended_and_add_up(
    weeks_log: Path,
) -> None:
    summary = _json(weeks_log, "--over", "day")

    periods = summary["periods"]
    assert isinstance(periods, list)
    assert summary["summary_version"] == 11
    assert (summary["over"], summary["tz"]) == ("day", "UTC")
    days = {p["start"][:10]: p["runs"] for p in periods}
    # 2 Nov to 17 Nov, every day shown, the empty ones with 0 runs.
    assert len(periods) == 16
    assert days["2026-11-02"] == 2
    assert days["2026-11-04"] == 1
    assert days["2026-11-06"] == 0  # run e started on the 6th, ended on the 7th (UTC)
    assert days["2026-11-07"] == 1
    assert days["2026-11-17"] == 1
    assert days["2026-11-10"] == 0
    assert sum(days.values()) == summary["runs"] == 5
    empty = next(p for p in periods if p["start"].startswith("2026-11-10"))
    assert empty["groups"] == []
    assert empty["total"]["runs"] == 0
    monday = periods[0]
    assert monday["start"] == "2026-11-02T00:00:00+00:00"
    assert monday["end"] == "2026-11-03T00:00:00+00:00"
    assert sorted(g["task"] for g in monday["groups"]) == ["docs", "fix"]
    assert monday["total"]["accepted"] == 2
    # Tokens and cost of every period add up to the report's.
    tokens = sum(p["total"]["input_tokens"] for p in periods)
    assert tokens == sum(g["input_tokens"] for g in summary["groups"]) == 5000


def test_weeks_start_on_monday_and_the_zone_moves_a_late_run(weeks_log: Path) -> None:
    utc = _json(weeks_log, "--over", "week")
    new_york = _json(weeks_log, "--over", "day", "--tz", "America/New_York")

    weeks = utc["periods"]
    assert [(p["start"][:10], p["runs"]) for p in weeks] == [
        ("2026-11-02", 4),
        ("2026-11-09", 0),
        ("2026-11-16", 1),
    ]
    # Run e ends at 00:00:40 UTC on the 7th: 19:00:40 on the 6th in New York (UTC-5).
    days = {p["start"][:10]: p["runs"] for p in new_york["periods"]}
    assert new_york["periods"][0]["start"] == "2026-11-02T00:00:00-05:00"
    assert days["2026-11-06"] == 1 and days["2026-11-07"] == 0
    assert sum(days.values()) == 5


def test_an_unknown_zone_is_a_usage_error_naming_it(weeks_log: Path) -> None:
    done = phasegate("report", weeks_log, "--over", "day", "--tz", "Mars/Olympus")

    assert done.returncode == 2
    assert "Mars/Olympus" in done.stderr
    assert "Traceback" not in done.stderr


def test_table_and_markdown_carry_the_periods_and_the_empty_ones(weeks_log: Path) -> None:
    markdown = phasegate("report", weeks_log, "--over", "week", "--format", "markdown")
    table = phasegate("report", weeks_log, "--over", "week", "--format", "table")

    assert markdown.returncode == 0, markdown.stderr
    assert "### By week (UTC)" in markdown.stdout
    assert "| week of 2026-11-09 | — | — | 0 | 0 |" in markdown.stdout
    assert "| week of 2026-11-02 | fix | gate | 3 | 2 |" in markdown.stdout
    assert table.returncode == 0, table.stderr
    assert "By week (UTC)" in table.stdout
    assert "2026-11-16" in table.stdout


def test_html_draws_each_figure_over_time_self_contained_and_escaped(tmp_path: Path) -> None:
    log = LogWriter()
    task = "<script>alert(1)</script>"
    log.run("x", "gate", [_phase("accepted")], verdict="accepted", attempts=1, start=MONDAY,
            task=task)  # fmt: skip
    log.run("y", "gate", [_phase("rejected")], verdict="rejected", attempts=2,
            start=MONDAY + timedelta(days=3), task=task)  # fmt: skip
    path = tmp_path / "x.jsonl"
    path.write_text("\n".join(log.lines) + "\n")

    done = phasegate("report", path, "--over", "day", "--format", "html")

    assert done.returncode == 0, done.stderr
    page = done.stdout
    charts = re.findall(r'data-chart="(trend-[a-z]+)"', page)
    assert charts == ["trend-runs", "trend-rates", "trend-attempts", "trend-refusals",
                      "trend-tokens", "trend-cost", "trend-duration"]  # fmt: skip
    assert "<script" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert not re.search(r"(src|href)=\"https?:", page)
    # The success line has a 95 % interval whisker per period with runs; the empty days
    # (the 3rd and 4th) are gaps: 2 points on the rates' success line.
    rates = page[page.index('data-chart="trend-rates"') :]
    rates = rates[: rates.index("</svg>")]
    assert rates.count('class="interval"') == 4  # success and first try, 2 days with runs
    assert "2026-11-03" in rates
