"""The report's renderings (metrics.render): tables that fit the terminal and cut no figure."""

from __future__ import annotations

import pytest

from phasegate.metrics.aggregate import LogAggregator
from phasegate.metrics.render import render_table
from phasegate.metrics.summary import summarize
from phasegate.testing.event_log import synthetic_log_lines


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
