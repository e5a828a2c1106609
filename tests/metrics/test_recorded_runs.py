"""Recorded runs in ``phasegate report``: a ``run.completed`` or ``pipeline.completed`` line
that names its ``recording`` folder is listed, and its page linked, in every format."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from phasegate.metrics.aggregate import LogAggregator
from phasegate.metrics.formatting import page_href
from phasegate.metrics.html import render_html
from phasegate.metrics.render import render_markdown, render_table
from phasegate.metrics.summary import summarize
from tests.helpers.cli import phasegate
from tests.helpers.scenarios import EXAMPLE


def completed(event: str, run_id: str, recording: object = None, **more: Any) -> str:
    """A completion line of run ``run_id`` (with ``recording`` unless None)."""
    line = {"event": event, "timestamp": "2026-11-26T23:00:00.000+00:00", "run_id": run_id,
            "task": "fix", "mode": "gate", "schema_version": 1, "verdict": "accepted",
            "attempts": 1, "duration_ms": 1000, "input_tokens": 10, "output_tokens": 5,
            "cost_usd": 0.001, **more}  # fmt: skip
    if recording is not None:
        line["recording"] = recording
    return json.dumps(line)


def summary_of(*lines: str) -> dict[str, Any]:
    aggregator = LogAggregator()
    aggregator.add_lines(lines)
    return summarize(aggregator)


def test_completed_runs_that_name_a_recording_are_listed_with_their_page() -> None:
    summary = summary_of(
        completed("run.completed", "a1", "/runs/a1/recording"),
        completed("run.completed", "b2"),
        completed("pipeline.completed", "c3", "rec/c3", isolation="session"),
    )

    assert [(r["run_id"], r["recording"], r["page"]) for r in summary["recordings"]] == [
        ("a1", "/runs/a1/recording", "/runs/a1/recording/index.html"),
        ("c3", "rec/c3", "rec/c3/index.html"),
    ]
    assert summary["runs"] == 3


@pytest.mark.parametrize("value", [42, "", "a\0b", ["x"], "x" * 5000])
def test_a_recording_that_is_no_plausible_path_is_not_listed(value: object) -> None:
    summary = summary_of(completed("run.completed", "a1", value))

    assert "recordings" not in summary and summary["runs"] == 1


def test_a_log_without_recordings_has_no_recordings_key() -> None:
    assert "recordings" not in summary_of(completed("run.completed", "a1"))


def test_links_are_relative_to_the_reports_folder_and_encoded(tmp_path: Path) -> None:
    page = str(tmp_path / "runs" / "a b" / "index.html")

    assert page_href(page, tmp_path / "reports") == "../runs/a%20b/index.html"
    assert page_href(page, None) == (tmp_path / "runs" / "a b" / "index.html").as_uri()
    assert (
        page_href("javascript:alert(1)/index.html", None) == "javascript%3Aalert%281%29/index.html"
    )


def test_html_and_markdown_link_each_recorded_run_and_escape_what_the_log_says(
    tmp_path: Path,
) -> None:
    hostile = '"><script>alert(1)</script>'
    summary = summary_of(completed("run.completed", hostile, str(tmp_path / "r" / hostile)))

    html = render_html(summary, base=tmp_path)
    markdown = render_markdown(summary, base=tmp_path)

    assert "<script>" not in html and hostile not in html
    assert '<a href="r/%22%3E%3Cscript%3Ealert%281%29%3C/script%3E/index.html">' in html
    assert "&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;</a>" in html
    assert "](r/%22%3E%3Cscript%3Ealert%281%29%3C/script%3E/index.html)" in markdown
    assert "Recorded runs" in render_table(summary, width=200)


@pytest.mark.cli
def test_report_to_an_html_file_links_recorded_runs_relative_to_it(tmp_path: Path) -> None:
    log = tmp_path / "runs.jsonl"
    log.write_text(completed("run.completed", "a1", str(tmp_path / "rec" / "a1")) + "\n")
    (tmp_path / "out").mkdir()

    done = phasegate("report", log, "--format", "html", "--output", tmp_path / "out" / "r.html")

    assert done.returncode == 0, done.stderr
    assert '<a href="../rec/a1/index.html">a1</a>' in (tmp_path / "out" / "r.html").read_text()


@pytest.mark.cli
def test_a_real_recorded_runs_log_links_its_page_from_the_html_report(tmp_path: Path) -> None:
    """run --record --log-file, then report: the run.completed line names the folder, and
    the report links the page the run wrote."""
    project = tmp_path / "project"
    shutil.copytree(EXAMPLE / "project", project)
    log = tmp_path / "events.jsonl"
    run = phasegate("run", EXAMPLE / "task.yaml", "--workdir", project, "--model-script",
                    EXAMPLE / "model.yaml", "--record", tmp_path / "rec",
                    "--log-file", log)  # fmt: skip
    (tmp_path / "out").mkdir()

    done = phasegate("report", log, "--format", "html", "--output", tmp_path / "out" / "r.html")

    assert run.returncode == 0, run.stderr
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "out" / "r.html").read_text()
    assert re.search(r'<a href="\.\./rec/index\.html">[0-9a-f]{12}</a>', html)
    assert (tmp_path / "rec" / "index.html").is_file()
