"""The html report (phasegate.metrics.html): content, charts, escaping, and a real browser.

Summaries come from real aggregation of a log shaped like the runner's: two tasks, three
modes, runs that pass, fail at a phase, retry or error. The browser tests render the page in
Debian's headless chromium (``make chromium`` installs it) and skip without it, unless
PHASEGATE_REQUIRE_CHROMIUM=1 (as in CI) turns the skip into a failure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from phasegate.metrics.aggregate import LogAggregator
from phasegate.metrics.html import CHARTS, render_html
from phasegate.metrics.summary import summarize
from phasegate.metrics.svg import PALETTE
from phasegate.modes import GroupBy
from tests.helpers.devtools import chromium_environment
from tests.helpers.logs import LogWriter
from tests.helpers.png import PNG_SIGNATURE, png_rows

TASKS = {"fix-vulnerability": ("edit", "summary"), "add-tests": ("write", "run", "summary")}
PLAN = [
    ("gate", None, 1, 4), ("gate", None, 1, 12), ("gate", None, 2, 40), ("gate", 1, 3, 90),
    ("single-query", None, 1, 3), ("single-query", 1, 1, 20),
    ("unstructured", None, 1, 8), ("unstructured", 0, 1, 25), ("unstructured", 0, 0, 1),
]  # fmt: skip
"""Runs of each task: (mode, phases accepted (None: all), gate checks, seconds per phase).
Zero checks is a run that errored before its first check."""
START = datetime(2026, 11, 21, 9, 0, tzinfo=UTC)
HOSTILE = "<script>alert(1)</script>"


def run_lines(
    n: int, task: str, mode: str, accepted: int | None, attempts: int, step_s: int
) -> Iterator[str]:
    """The JSON lines of run ``n``, in the runner's order: phases work and are claimed and
    judged one after another; the last (output) phase has no marker, only its gate check."""
    names = TASKS.get(task, ("edit", "summary"))
    accepted = len(names) if accepted is None else accepted
    started = START + timedelta(hours=n)
    common = {"run_id": f"{n:012x}", "task": task, "mode": mode, "schema_version": 1}

    def line(event: str, at: datetime, **fields: Any) -> str:
        stamp = at.isoformat(timespec="milliseconds")
        return json.dumps({"event": event, "timestamp": stamp, **common, **fields})

    yield line("run.started", started, agent="scripted", workdir="/work/p",
               phases=len(names), max_attempts=3)  # fmt: skip
    for index, name in enumerate(names[: accepted + 1] if attempts else (), start=1):
        at = started + timedelta(seconds=step_s * index)
        yield line("phase.started", at - timedelta(seconds=step_s), phase=index, name=name)
        yield line("tool.called", at, phase=index, tool="Edit", tool_use_id=f"t{index}", ok=True)
        yield line("tool.called", at, phase=index, tool="Bash", tool_use_id=f"e{index}",
                   ok=index != 1)  # fmt: skip
        if index < len(names):
            yield line("phase.marker", at, phase=index, name=name, text="done", source="tool")
        yield line("phase.gate", at + timedelta(milliseconds=300), phase=index, name=name,
                   attempt=attempts, trigger="tool", accepted=index <= accepted,
                   issues=[])  # fmt: skip
    end = started + timedelta(seconds=step_s * (len(names) + 1))
    for index, name in enumerate(names, start=1):
        status = "accepted" if index <= accepted else "rejected"
        if index > accepted + 1 or not attempts:
            status = "not_reached"
        yield line("phase.completed", end, phase=index, name=name, status=status,
                   attempts=attempts if status != "not_reached" else 0, duration_ms=step_s * 1000,
                   completed_by="tool", tools={"Edit": 1}, tool_errors=int(index == 1),
                   files_changed=["app.py"], input_tokens=1200, output_tokens=300,
                   cost_usd=0.01, issues=[])  # fmt: skip
    verdict = "error" if not attempts else "accepted" if accepted == len(names) else "rejected"
    yield line("run.completed", end, verdict=verdict, attempts=attempts,
               duration_ms=step_s * 1000 * (len(names) + 1), files_changed=["app.py"],
               findings=[], reverted=False, input_tokens=2400, output_tokens=600,
               cost_usd=0.02, error="session ended" if verdict == "error" else None)  # fmt: skip


def summary_of(tasks: tuple[str, ...] = tuple(TASKS), by: GroupBy = "phase") -> dict[str, Any]:
    """``summarize()`` of every planned run of ``tasks``, fed line by line."""
    aggregator = LogAggregator()
    runs = [(task, *plan) for task in tasks for plan in PLAN]
    for n, (task, mode, accepted, attempts, step_s) in enumerate(runs):
        for text in run_lines(n, task, mode, accepted, attempts, step_s):
            aggregator.add_line(text)
    return summarize(aggregator, by)


@dataclass
class Chart:
    """One <svg> of a page: its attributes, bar tooltips and visible texts."""

    attrs: dict[str, str]
    tooltips: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)

    def size(self) -> tuple[float, float]:
        """The declared width and height."""
        return float(self.attrs["width"]), float(self.attrs["height"])


class Charts(HTMLParser):
    """The charts of a page by their ``data-chart``."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.charts: dict[str, Chart] = {}
        self._chart: Chart | None = None
        self._open: list[str] = []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "svg":
            self._chart = Chart({name: value or "" for name, value in attrs})
            self.charts[self._chart.attrs["data-chart"]] = self._chart
        elif self._chart is not None:
            self._open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "svg":
            self._chart, self._open = None, []
        elif self._chart is not None and self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        if self._chart is None or not self._open:
            return
        if self._open[-2:] == ["rect", "title"]:
            self._chart.tooltips.append(data)
        elif self._open[-1] == "text":
            self._chart.texts.append(data)


@pytest.fixture(scope="module")
def summary() -> dict[str, Any]:
    """Two tasks, three modes, 18 runs."""
    return summary_of()


@pytest.fixture(scope="module")
def page(summary: dict[str, Any]) -> str:
    """The report of ``summary``."""
    return render_html(summary)


def test_the_report_is_one_document_with_the_totals_every_group_and_every_phase(
    summary: dict[str, Any], page: str
) -> None:
    """Title, the counts of lines and runs, a section per task and mode with its phases."""
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "<title>phasegate report</title>" in page
    assert f"<dt>runs</dt><dd>{summary['runs']}</dd>" in page
    assert f"<dt>log lines</dt><dd>{summary['lines']}</dd>" in page
    assert "<dt>skipped lines</dt><dd>0</dd>" in page
    assert summary["runs"] == 18
    for task, names in TASKS.items():
        for mode in ("gate", "single-query", "unstructured"):
            assert f"<h3>{task} / {mode}</h3>" in page
        for index, name in enumerate(names, start=1):
            assert f"<td>{index}. {name}</td>" in page
    assert "<td>75 %</td><td>50 %</td><td>33 %</td><td>+25 pts</td>" in page


def test_the_four_charts_are_inline_svg_with_a_fixed_size_axes_and_bar_tooltips(
    page: str,
) -> None:
    """Each chart: its data-chart name, width, height, a matching viewBox, bars with titles."""
    charts = Charts(page).charts

    assert list(charts) == list(CHARTS)
    for chart in charts.values():
        width, height = chart.size()
        assert width > 0 and height > 0
        assert chart.attrs["viewbox"] == f"0 0 {width:g} {height:g}"
        assert chart.attrs["class"] == "chart"
        assert chart.tooltips, chart.attrs["data-chart"]
        assert "no data" not in chart.texts
    assert "phases accepted (% of runs)" in charts["completion-rate"].texts
    assert {"gate checks in the run", "runs"} <= set(charts["attempts"].texts)
    assert "phases completed" in charts["time-to-completion"].texts
    assert "runs accepted (%)" in charts["mode-comparison"].texts


def test_the_completion_chart_has_a_bar_per_task_mode_and_phase_with_its_rate(
    summary: dict[str, Any], page: str
) -> None:
    """A gate run of fix-vulnerability failed its summary: 3 of 4 completed that phase."""
    tooltips = Charts(page).charts["completion-rate"].tooltips

    assert len(tooltips) == sum(len(group["phases"]) for group in summary["groups"])
    assert "fix-vulnerability / gate · 1. edit: 100 % completed, 4 runs" in tooltips
    assert "fix-vulnerability / gate · 2. summary: 75 % completed, 4 runs" in tooltips
    assert "add-tests / unstructured · 1. write: 33 % completed, 3 runs" in tooltips


def test_the_attempts_histogram_sums_every_group_and_shows_empty_counts(page: str) -> None:
    """Per task: one errored run with 0 checks, six with 1, one with 2, one with 3."""
    tooltips = Charts(page).charts["attempts"].tooltips

    assert tooltips == [
        "0 attempts: 2 runs",
        "1 attempt: 12 runs",
        "2 attempts: 2 runs",
        "3 attempts: 2 runs",
    ]


def test_time_to_completion_stacks_phases_by_name_and_counts_each_accepted_phase_once(
    page: str,
) -> None:
    """Both tasks' summary phases share a colour; every accepted phase is in one bin."""
    chart = Charts(page).charts["time-to-completion"]
    counts = {tip.split(": ")[0]: int(tip.split(": ")[1].split()[0]) for tip in chart.tooltips}
    accepted = sum(
        len(names) if accepted is None else accepted
        for names in TASKS.values()
        for _, accepted, attempts, _ in PLAN
        if attempts
    )

    assert sum(counts.values()) == accepted
    assert {"edit", "write", "run", "summary"} <= set(chart.texts)
    # edit claimed 3 s and 4 s after the start; summary accepted 6.3, 8.3, 9.3 and 12.3 s after.
    assert counts["edit, 1–5 s"] == 2 and counts["summary, 5–15 s"] == 4
    assert "≥ 30 min" in chart.texts


def test_the_mode_comparison_shows_each_modes_success_rate_per_task(page: str) -> None:
    """Gate accepts 3 of 4 runs, single-query 1 of 2, unstructured 1 of 3, in both tasks."""
    tooltips = Charts(page).charts["mode-comparison"].tooltips

    for task in TASKS:
        assert f"{task} · gate: 75 % of runs accepted" in tooltips
        assert f"{task} · single-query: 50 % of runs accepted" in tooltips
        assert f"{task} · unstructured: 33 % of runs accepted" in tooltips


@pytest.mark.parametrize("by", ["task", "mode"])
def test_coarser_groupings_still_give_four_charts(by: GroupBy) -> None:
    """By mode there are no phase rows: the completion chart says so instead of failing."""
    charts = Charts(render_html(summary_of(by=by))).charts

    assert list(charts) == list(CHARTS)
    assert ("no data" in charts["completion-rate"].texts) == (by == "mode")
    assert charts["attempts"].tooltips[1] == "1 attempt: 12 runs"


def test_names_from_the_log_are_escaped_everywhere() -> None:
    """A task named like a script and a phase named like an image tag stay text."""
    aggregator = LogAggregator()
    hostile_phase = '"><img src=x onerror=alert(1)>'
    for text in run_lines(1, HOSTILE, "gate", None, 1, 5):
        aggregator.add_line(text.replace('"summary"', json.dumps(hostile_phase)))
    page = render_html(summarize(aggregator))

    assert "<script" not in page and "<img" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;" in page
    charts = Charts(page).charts
    assert list(charts) == list(CHARTS)
    assert f"{HOSTILE} · gate: 100 % of runs accepted" in charts["mode-comparison"].tooltips


def test_reading_warnings_are_listed_under_the_totals_escaped() -> None:
    """A damaged log's warning (it names a file, which may hold markup) is shown as text."""
    warning = "<b>old.gz</b>: damaged gzip stream (CRC check failed); read 3 lines"

    page = render_html(summarize(LogAggregator(), warnings=[warning]))

    assert '<ul class="warnings"><li>&lt;b&gt;old.gz&lt;/b&gt;: damaged gzip stream' in page
    assert "<b>" not in page


def test_the_checks_section_has_a_row_per_check_its_description_escaped() -> None:
    """A check's description comes from the log: markup in it stays text in its cell."""
    log = LogWriter()
    hostile = f"`{HOSTILE}` exits with 0"
    phase = {
        "name": "edit",
        "status": "accepted",
        "attempts": 1,
        "claim_s": 5,
        "gate_s": 6,
        "checks": [{"at": 5, "passed": True, "ms": 1500, "description": hostile}],
    }
    for mode in ("gate", "single-query"):
        log.run(f"r-{mode}", mode, [phase], verdict="accepted", attempts=1)
    aggregator = LogAggregator()
    aggregator.add_lines(log.lines)

    page = render_html(summarize(aggregator))

    assert "<script" not in page
    section = page[page.index('<section class="checks">') :]
    assert "<h3>Checks the gate ran</h3>" in section
    shown = "`&lt;script&gt;alert(1)&lt;/script&gt;` exits with 0"
    row = (f"<tr><td>fix</td><td>gate</td><td>1. edit</td><td>{shown}</td><td>1</td><td>1</td>"
           "<td>100 %</td><td>1.5 s</td><td>1.5 s</td><td>1.5 s</td><td>1</td><td>1</td>"
           "<td>100 %</td><td>–</td></tr>")  # fmt: skip
    assert row in section
    assert "<h3>Checks compared (passing at the end of a task run)</h3>" in section


def test_a_report_without_checks_has_no_checks_section(page: str) -> None:
    assert '<section class="checks">' not in page


def test_a_cost_no_line_recorded_is_shown_as_missing_not_as_zero() -> None:
    """Logs of an agent that reports no cost: the cost cells show a dash, never 0.0000."""
    aggregator = LogAggregator()
    for text in run_lines(1, "fix", "gate", 1, 1, 5):
        event = json.loads(text)
        aggregator.add_line(
            json.dumps({**event, "cost_usd": None} if "cost_usd" in event else event)
        )

    page = render_html(summarize(aggregator))

    assert "<td>cost</td><td>–</td>" in page
    assert "0.0000" not in page


def test_an_empty_log_gives_four_charts_that_say_no_data() -> None:
    """No runs: zero totals, no group sections, and every chart still has a size."""
    page = render_html(summarize(LogAggregator()))
    charts = Charts(page).charts

    assert list(charts) == list(CHARTS)
    for chart in charts.values():
        width, height = chart.size()
        assert width > 0 and height > 0
        assert "no data" in chart.texts
        assert not chart.tooltips
    assert "<dt>runs</dt><dd>0</dd>" in page and "No runs in the log." in page


def test_the_page_loads_nothing_from_anywhere(page: str) -> None:
    """No URL, script, stylesheet link, font or image; the page's policy forbids fetches."""
    assert "://" not in page
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.I)
    for needle in ("<script", "<link", "<img", "<iframe", "@import", "url(", "@font-face"):
        assert needle not in page.lower()
    assert "default-src 'none'" in page


# -- in a real browser ----------------------------------------------------------------------
CHROMIUM = shutil.which("chromium")
REQUIRED = os.environ.get("PHASEGATE_REQUIRE_CHROMIUM") == "1"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--virtual-time-budget=2000", "--window-size=1280,2000")  # fmt: skip
"""The closed network makes chromium hang on connection attempts unless these turn them off."""
MEASURE = """<script>
for (const svg of document.querySelectorAll("svg[data-chart]")) {
  const box = svg.getBoundingClientRect();
  svg.setAttribute("data-size", box.width + "x" + box.height);
  const frame = svg.parentElement.getBoundingClientRect();
  svg.setAttribute("data-frame", frame.left + "," + frame.right);
}
document.body.setAttribute("data-viewport", document.documentElement.clientWidth);
</script>"""
"""Added by the tests only: writes each chart's laid-out size, the left and right edges of its
frame, and the viewport's width (without a scroll bar) into the DOM for --dump-dom."""
browser = pytest.mark.skipif(
    CHROMIUM is None and not REQUIRED, reason="no chromium on PATH (`make chromium`)"
)


def chromium(tmp_path: Path, *args: str) -> str:
    """Run headless chromium with a fresh profile; its stdout."""
    if CHROMIUM is None:
        pytest.fail("PHASEGATE_REQUIRE_CHROMIUM=1 but chromium is not on PATH: `make chromium`")
    profile = tempfile.mkdtemp(prefix="profile-", dir=tmp_path)
    done = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
        env=chromium_environment(),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@browser
def test_chromium_paints_the_charts_in_a_screenshot(page: str, tmp_path: Path) -> None:
    """Not a flat colour: many distinct rows, and bars in each of the three mode colours."""
    (tmp_path / "report.html").write_text(page)
    shot = tmp_path / "report.png"

    chromium(tmp_path, f"--screenshot={shot}", (tmp_path / "report.html").as_uri())

    data = shot.read_bytes()
    assert data.startswith(PNG_SIGNATURE)
    bpp, rows = png_rows(data)
    assert len(rows) == 2000 and len(set(rows)) > 2
    for colour in PALETTE[:3]:  # gate, single-query, unstructured
        bar = (bytes.fromhex(colour[1:]) + b"\xff" * (bpp - 3)) * 20  # 20 pixels in a row
        assert any(bar in row for row in rows), colour


def measured(page: str, tmp_path: Path, name: str) -> Path:
    """``page`` with the test-only measuring script, and without the policy that would
    block it."""
    relaxed, found = re.subn(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page)
    assert found == 1
    path = tmp_path / name
    path.write_text(relaxed.replace("</body>", f"{MEASURE}</body>"))
    return path


@browser
def test_chromium_lays_out_all_four_charts_in_their_declared_proportions(
    page: str, tmp_path: Path
) -> None:
    """A test-only script records each chart's bounding box; the page's own policy forbids
    scripts, so this variant drops it, and the unchanged page runs no script at all."""
    with_script = measured(page, tmp_path, "measured.html")
    as_given = tmp_path / "as-given.html"
    as_given.write_text(page.replace("</body>", f"{MEASURE}</body>"))

    charts = Charts(chromium(tmp_path, "--dump-dom", with_script.as_uri())).charts
    blocked = Charts(chromium(tmp_path, "--dump-dom", as_given.as_uri())).charts

    assert list(charts) == list(CHARTS)
    for name, chart in charts.items():
        width, height = (float(n) for n in chart.attrs["data-size"].split("x"))
        declared_width, declared_height = chart.size()
        assert width > 0 and height > 0, name
        assert width / height == pytest.approx(declared_width / declared_height, rel=0.01), name
    assert list(blocked) == list(CHARTS)
    assert not any("data-size" in chart.attrs for chart in blocked.values())


@browser
def test_at_1200_pixels_the_charts_fill_the_width_of_the_window(page: str, tmp_path: Path) -> None:
    """Each chart's frame spans from the page's left margin to its right one: the whole
    width, not the two thirds a chart at its declared size would leave."""
    dom = chromium(tmp_path, "--window-size=1200,2000", "--dump-dom",
                   measured(page, tmp_path, "measured.html").as_uri())  # fmt: skip

    found = re.search(r'data-viewport="([0-9.]+)"', dom)
    assert found is not None
    viewport = float(found.group(1))
    assert 1100 < viewport <= 1200  # the window, less a scroll bar
    for name, chart in Charts(dom).charts.items():
        left, right = (float(n) for n in chart.attrs["data-frame"].split(","))
        assert left == pytest.approx(24, abs=1), name  # the body's margin
        assert right == pytest.approx(viewport - 24, abs=1), name
