"""The grader in ``phasegate report``: its tokens and cost apart per phase and per run (task or
pipeline), part of the run's figures so that the phases' own, plus their grader's, plus what no
phase owns add up to the run's; a rubric's criteria met in the checks table (every figure in
the table: tests/metrics/test_table_figures.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from phasegate.metrics.aggregate import LogAggregator
from phasegate.metrics.formatting import check_cells, criteria_met
from phasegate.metrics.summary import summarize
from phasegate.pipelines.report import PipelineReport
from phasegate.tasks.report import RunReport
from tests.helpers.graded import GRADER_SESSION, graded_logs


@pytest.fixture
def graded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[str], RunReport, PipelineReport]:
    """The lines of a graded task run and a graded pipeline run, and their reports."""
    return graded_logs(tmp_path, monkeypatch)


def test_a_groups_phases_graders_and_unattributed_add_up_to_its_runs_figures(
    graded: tuple[list[str], RunReport, PipelineReport],
) -> None:
    """Tokens exactly, cost to a millionth; the group's grader is its phases' and its runs'
    report's; a pipeline's group has its report's grader and totals."""
    lines, task, pipeline = graded
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
    graded: tuple[list[str], RunReport, PipelineReport],
) -> None:
    """Phase 1's rubric ran at both judgments (one criterion each), phase 2's once (two); a
    run where a criterion was not met lowers the rate; other checks have no criteria."""
    lines, _, _ = graded
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
