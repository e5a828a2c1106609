"""The grader in ``phasegate report``: its tokens and cost apart per phase and per run (task or
pipeline), part of the run's figures so that the phases' own, plus their grader's, plus what no
phase owns add up to the run's; a rubric's criteria met in the checks table. Every figure is in
the table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from phasegate.metrics.aggregate import LogAggregator
from phasegate.metrics.formatting import check_cells, criteria_met
from phasegate.metrics.render import render_markdown, render_table
from phasegate.metrics.summary import summarize
from phasegate.modes import GroupBy
from phasegate.pipelines.report import PipelineReport
from phasegate.tasks.report import RunReport
from tests.helpers.graded import GRADER_SESSION, graded_pipeline, graded_task
from tests.metrics.test_table_figures import missing_figures


@pytest.fixture
def graded_logs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[str], RunReport, PipelineReport]:
    """The lines of a graded task run and a graded pipeline run, and their reports."""
    (tmp_path / "task").mkdir()
    (tmp_path / "pipeline").mkdir()
    task = graded_task(tmp_path / "task", monkeypatch)
    pipeline = graded_pipeline(tmp_path / "pipeline", monkeypatch)
    assert isinstance(task.report, RunReport) and isinstance(pipeline.report, PipelineReport)
    lines = [*task.log.read_text().splitlines(), *pipeline.log.read_text().splitlines()]
    return lines, task.report, pipeline.report


def test_a_groups_phases_graders_and_unattributed_add_up_to_its_runs_figures(
    graded_logs: tuple[list[str], RunReport, PipelineReport],
) -> None:
    """Tokens exactly, cost to a millionth; the group's grader is its phases' and its runs'
    report's; a pipeline's group has its report's grader and totals."""
    lines, task, pipeline = graded_logs
    aggregator = LogAggregator()
    aggregator.add_lines(lines)
    summary = summarize(aggregator)

    groups = {group["task"] + "/" + group["mode"]: group for group in summary["groups"]}
    group = groups["graded/gate"]
    phases = group["phases"]
    for name in ("input_tokens", "output_tokens"):
        own = sum(p[name] for p in phases)
        graders = sum(p["grader_usage"][name] for p in phases)
        assert graders == group["grader_usage"][name] == getattr(task.grader_usage, name)
        assert own + graders + group["unattributed_usage"][name] == group[name], name
        assert group[name] == getattr(task.usage, name)
    costs = [p["cost_usd"] for p in phases] + [p["grader_usage"]["cost_usd"] for p in phases]
    costs.append(group["unattributed_usage"]["cost_usd"])
    assert sum(costs) == pytest.approx(group["cost_usd"], abs=1e-6)
    assert group["grader_usage"]["cost_usd"] == pytest.approx(4 * 0.012)
    (piped,) = [g for key, g in groups.items() if key != "graded/gate"]
    assert piped["grader_usage"] == {
        "input_tokens": 2 * GRADER_SESSION.input_tokens,
        "output_tokens": 2 * GRADER_SESSION.output_tokens,
        "cost_usd": pytest.approx(2 * 0.012),
    }
    assert piped["input_tokens"] == pipeline.usage.input_tokens


def test_a_rubrics_row_counts_its_criteria_met_over_its_runs(
    graded_logs: tuple[list[str], RunReport, PipelineReport],
) -> None:
    """Phase 1's rubric ran at both judgments (one criterion each), phase 2's once (two); a
    run where a criterion was not met lowers the rate; other checks have no criteria."""
    lines, _, _ = graded_logs
    rubric = next(
        json.loads(line)
        for line in lines
        if '"check.ran"' in line and json.loads(line).get("phase") == 2
    )
    unmet = {**rubric, "run_id": "other", "passed": False,
             "criteria": [{**rubric["criteria"][0], "verdict": "not_met"},
                          {**rubric["criteria"][1], "verdict": "cannot_tell"}]}  # fmt: skip
    aggregator = LogAggregator()
    aggregator.add_lines([*lines, json.dumps(unmet)])

    rows = {(row["phase"], row["kind"]): row for row in summarize(aggregator)["checks"]}

    first, second = rows[(1, "rubric")], rows[(2, "rubric")]
    assert (first["criteria"], first["criteria_met"], first["criteria_met_rate"]) == (2, 2, 1.0)
    assert (second["criteria"], second["criteria_met"], second["criteria_met_rate"]) == (4, 2, 0.5)
    assert "criteria" not in rows[(1, "file_exists")]
    assert criteria_met(second) == "2 of 4, 50 %" and criteria_met(rows[(1, "file_exists")]) == "–"
    assert check_cells(second)[-1] == "2 of 4, 50 %"


def test_every_grader_figure_is_in_the_table_and_the_markdown(
    graded_logs: tuple[list[str], RunReport, PipelineReport],
) -> None:
    """Whatever the grouping: the groups' and phases' grader_usage and the rubric rows'
    criteria are cells of the table (tests/metrics/test_table_figures.py's rule)."""
    lines, task, _ = graded_logs
    aggregator = LogAggregator()
    aggregator.add_lines(lines)
    groupings: tuple[GroupBy, ...] = ("phase", "task", "mode")
    for by in groupings:
        summary = summarize(aggregator, by)

        assert missing_figures(summary, render_table(summary, width=1000)) == [], by
    markdown = render_markdown(summarize(aggregator))
    shown = f"{task.grader_usage.input_tokens}/{task.grader_usage.output_tokens} $0.0480"
    assert shown in markdown
