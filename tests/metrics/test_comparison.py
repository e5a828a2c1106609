"""The summary's uncertainty and per-accepted-run fields, per group, per task and pooled."""

from __future__ import annotations

from typing import Any

import pytest

from phasegate.metrics.aggregate import LogAggregator
from phasegate.metrics.formatting import comparison_rows
from phasegate.metrics.render import render_markdown
from phasegate.metrics.summary import SUMMARY_VERSION, summarize
from tests.helpers.logs import LogWriter, three_runs

_PHASES = [{"name": "edit", "status": "accepted", "attempts": 1, "gate_s": 1}]
_FAILED = [{"name": "edit", "status": "rejected", "attempts": 1}]


def repeats(log: LogWriter, task: str, mode: str, accepted: int, rejected: int) -> None:
    """``accepted`` runs then ``rejected`` runs of ``task`` in ``mode``."""
    for index in range(accepted + rejected):
        ok = index < accepted
        log.run(f"{task}-{mode}-{index}", mode, _PHASES if ok else _FAILED,
                verdict="accepted" if ok else "rejected", attempts=1, task=task)  # fmt: skip


def summary_of(log: LogWriter) -> dict[str, Any]:
    """The summary of the log's lines, grouped by task and mode."""
    aggregator = LogAggregator()
    aggregator.add_lines(log.lines)
    return summarize(aggregator)


@pytest.fixture
def summary() -> dict[str, Any]:
    """fix: gate 3 of 4, single-query 1 of 4, unstructured 0 of 2; docs: gate 2 of 2,
    single-query 0 of 2. Every run costs $0.50, 1000 tokens in and 100 out."""
    log = LogWriter()
    repeats(log, "fix", "gate", 3, 1)
    repeats(log, "fix", "single-query", 1, 3)
    repeats(log, "fix", "unstructured", 0, 2)
    repeats(log, "docs", "gate", 2, 0)
    repeats(log, "docs", "single-query", 0, 2)
    return summary_of(log)


def test_each_group_has_its_rates_error_interval_and_cost_per_accepted_run(
    summary: dict[str, Any],
) -> None:
    """fix/gate, 3 of 4: se sqrt(.75 * .25 / 4) = 0.2165, Wilson [0.3006, 0.9544];
    4 runs at $0.50 over 3 accepted: $0.666667 and 1333.333 tokens in per accepted run."""
    gate = next(g for g in summary["groups"] if (g["task"], g["mode"]) == ("fix", "gate"))

    assert summary["summary_version"] == SUMMARY_VERSION == 11
    assert (gate["runs"], gate["accepted"], gate["success_rate"]) == (4, 3, 0.75)
    assert gate["success_rate_standard_error"] == 0.2165
    assert gate["success_rate_interval_95"] == [0.3006, 0.9544]
    assert gate["cost_per_accepted_usd"] == 0.666667
    assert (gate["input_tokens_per_accepted"], gate["output_tokens_per_accepted"]) == (
        1333.333,
        133.333,
    )


def test_a_group_with_nothing_accepted_has_no_cost_per_accepted_run(
    summary: dict[str, Any],
) -> None:
    """0 of 2: no accepted run to divide by (null, not infinity or 0); the interval of 0/2."""
    group = next(g for g in summary["groups"] if g["mode"] == "unstructured")

    assert group["cost_per_accepted_usd"] is None
    assert group["input_tokens_per_accepted"] is None
    assert group["success_rate_standard_error"] == 0.0
    assert group["success_rate_interval_95"] == [0.0, 0.6576]


def test_a_task_row_keeps_its_version_2_fields_and_adds_counts_and_intervals(
    summary: dict[str, Any],
) -> None:
    """fix: gate 3/4 against single-query 1/4 and unstructured 0/2, worked by hand: Wilson
    3/4 = [0.30063, 0.95441], 1/4 = [0.04558, 0.69936], 0/2 = [0, 0.65762]; so
    0.5 -/+ sqrt(0.44937² + 0.44936²), sqrt(0.20441² + 0.20442²) = [-0.1355, 0.7891] and
    0.75 - sqrt(0.44937² + 0.65762²), 0.75 + 0.20441 = [-0.0465, 0.9544]."""
    fix = next(row for row in summary["mode_comparison"] if row["task"] == "fix")

    assert fix["success_rate"] == {"gate": 0.75, "single-query": 0.25, "unstructured": 0.0}
    assert (fix["gate_minus_single_query"], fix["gate_minus_unstructured"]) == (0.5, 0.75)
    assert fix["runs"] == {"gate": 4, "single-query": 4, "unstructured": 2}
    assert fix["accepted"] == {"gate": 3, "single-query": 1, "unstructured": 0}
    assert fix["standard_error"] == {"gate": 0.2165, "single-query": 0.2165, "unstructured": 0.0}
    assert fix["interval_95"]["single-query"] == [0.0456, 0.6994]
    assert fix["gate_minus_single_query_interval_95"] == [-0.1355, 0.7891]
    assert fix["gate_minus_unstructured_interval_95"] == [-0.0465, 0.9544]


def test_a_difference_without_both_modes_has_no_interval(summary: dict[str, Any]) -> None:
    """docs never ran unstructured: that difference and its interval are null."""
    docs = next(row for row in summary["mode_comparison"] if row["task"] == "docs")

    assert docs["gate_minus_unstructured"] is None
    assert docs["gate_minus_unstructured_interval_95"] is None
    assert docs["gate_minus_single_query_interval_95"] is not None


def test_the_pooled_row_adds_up_every_tasks_runs_per_mode(summary: dict[str, Any]) -> None:
    """gate 5 of 6, single-query 1 of 6, unstructured 0 of 2, over both tasks."""
    pooled = summary["pooled_comparison"]

    assert pooled["task"] is None
    assert pooled["runs"] == {"gate": 6, "single-query": 6, "unstructured": 2}
    assert pooled["accepted"] == {"gate": 5, "single-query": 1, "unstructured": 0}
    assert pooled["gate_minus_single_query"] == pytest.approx(0.6667, abs=1e-4)
    low, high = pooled["gate_minus_single_query_interval_95"]
    assert low > 0 and high <= 1


def test_the_tables_show_the_intervals_and_a_row_for_all_tasks(summary: dict[str, Any]) -> None:
    """The Markdown comparison has a difference's interval beside it and an ``all tasks`` row."""
    rows = comparison_rows(summary)
    text = render_markdown(summary)

    assert [row[0] for row in rows] == ["docs", "fix", "all tasks"]
    assert "| fix | 75 % | 25 % | 0 % | +50 pts | −14 to +79 | +75 pts | −5 to +95 |" in text
    assert "| 4 | 3 | 0 | 75 % | ±22 | 30–95 % |" in text and "| $2.0000 | " in text
    assert "| fix | gate | 4 | 3 | 75 % | ±22 | 30–95 % |" in text  # each mode's own row


def test_one_task_has_no_pooled_row_in_the_tables() -> None:
    """Pooling one task repeats its row: the JSON has it, the tables leave it out."""
    summary = summary_of(three_runs())

    assert summary["pooled_comparison"]["runs"] == {"gate": 1, "single-query": 1,
                                                   "unstructured": 1}  # fmt: skip
    assert [row[0] for row in comparison_rows(summary)] == ["fix"]


def test_a_run_known_only_from_a_record_counts_its_verdict_tokens_and_cost() -> None:
    """add_run: a unit that failed before its log ended still counts as a failed repeat."""
    aggregator = LogAggregator()
    aggregator.add_lines(three_runs().lines)
    aggregator.add_run("fix", "gate", verdict="error", input_tokens=10, cost_usd=0.25)

    gate = next(g for g in summarize(aggregator)["groups"] if g["mode"] == "gate")

    assert aggregator.completed_runs() == 4
    assert (gate["runs"], gate["accepted"], gate["errors"]) == (2, 1, 1)
    assert (gate["input_tokens"], gate["cost_usd"]) == (1010, 0.75)
    assert gate["cost_per_accepted_usd"] == 0.75


def test_an_empty_log_has_no_comparison_and_no_pooled_row() -> None:
    """No runs: nothing to compare (null, not a row of zeros)."""
    summary = summary_of(LogWriter())

    assert summary["mode_comparison"] == [] and summary["pooled_comparison"] is None
