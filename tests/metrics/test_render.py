"""The report's renderings (metrics.render): tables that fit the terminal and cut no figure,
and percentiles marked when they are approximate."""

from __future__ import annotations

import pytest

from phasegate.metrics.aggregate import LogAggregator
from phasegate.metrics.html import render_html
from phasegate.metrics.render import render_markdown, render_table
from phasegate.metrics.stats import EXACT_LIMIT
from phasegate.metrics.summary import summarize
from phasegate.testing.event_log import synthetic_log_lines
from tests.helpers.logs import three_runs


def _summary() -> dict[str, object]:
    aggregator = LogAggregator()
    aggregator.add_lines(synthetic_log_lines(400, seed=3))
    return summarize(aggregator, "mode")


@pytest.mark.parametrize("width", [60, 100, 200])
def test_a_table_folds_what_does_not_fit_and_never_cuts_a_figure(width: int) -> None:
    """No cell ends in an ellipsis at any width; no line is wider than asked."""
    table = render_table(_summary(), width=width)
    assert "…" not in table
    assert max(len(line) for line in table.splitlines()) <= width


@pytest.mark.parametrize("columns", [60, 200])
def test_the_width_comes_from_the_terminal_or_columns(
    monkeypatch: pytest.MonkeyPatch, columns: int
) -> None:
    """Without a width, COLUMNS (or the terminal) decides, instead of a fixed 120."""
    monkeypatch.setenv("COLUMNS", str(columns))
    summary = _summary()
    assert render_table(summary) == render_table(summary, width=columns)
    assert max(len(line) for line in render_table(summary).splitlines()) <= columns


def test_percentiles_from_the_sketch_are_marked_approximate_in_every_rendering() -> None:
    """gate's run times and edit times pass 10,000 values: ``≈`` before their p50 (and p95),
    in the table, Markdown and HTML; the exact groups' times are not marked."""
    aggregator = LogAggregator()
    aggregator.add_lines(three_runs().lines)
    gate_runs, gate_edit = aggregator.runs[("fix", "gate")], aggregator.phases[("fix", "gate", 1)]
    for index in range(EXACT_LIMIT):
        gate_runs.duration_ms.add(90_000.0 + index)
        gate_edit.to_completion_ms.add(3_000.0)
    summary = summarize(aggregator)

    assert "≈" not in render_table(_summary(), width=200)
    for text in (render_table(summary, width=200), render_markdown(summary), render_html(summary)):
        assert "≈: a percentile from a sketch, within 1 % of the exact value." in text
        assert text.count("≈1.6 min") == 1  # the gate group's p50 run time
        assert text.count("≈3.01 s") == 2  # edit's p50 and p95 to complete
        assert "≈1.67 min" not in text and "1.67 min" in text  # unstructured: exact


def test_markdown_lists_each_check_in_a_table_that_no_description_can_break() -> None:
    """A check's description with a pipe and a line break stays in its one cell."""
    log = three_runs()
    phase = {
        "name": "edit",
        "status": "accepted",
        "attempts": 1,
        "claim_s": 5,
        "gate_s": 6,
        "checks": [{"at": 5, "passed": False, "ms": 250, "description": "a | b\nc"}],
    }
    log.run("r4", "gate", [phase], verdict="rejected", attempts=1)
    aggregator = LogAggregator()
    aggregator.add_lines(log.lines)

    text = render_markdown(summarize(aggregator))

    assert "\n### Checks the gate ran\n" in text
    figures = "| 1 | 0 | 0 % | 250 ms | 250 ms | 250 ms | 1 | 0 | 0 % |"
    assert f"| fix | gate | 1. edit | a \\| b c {figures}" in text
