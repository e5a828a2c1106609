"""The checks of a task in ``phasegate report``: each ``check.ran`` line counted in its
check's row (runs, pass rate, p50/p95, time), each ended task run counted once with the
check's last outcome, the modes compared on it, and its time kept out of the model's."""

from __future__ import annotations

import json
from datetime import UTC, timedelta
from pathlib import Path
from typing import Any

import pytest

from phasegate.metrics import aggregate
from phasegate.metrics.aggregate import LogAggregator
from phasegate.metrics.comparison import comparison_row
from phasegate.metrics.periods import PeriodAggregator, summarize_periods
from phasegate.metrics.stats import RunStats
from phasegate.metrics.summary import summarize
from phasegate.modes import GroupBy
from tests.helpers.checked_runs import prove_the_fix
from tests.helpers.logs import START, LogWriter

PYTEST = "`pytest` exits with 0 within 120 s"
LINT = "`ruff check` exits with 0 within 120 s"


def check(
    at: float, passed: bool, ms: float, description: str = PYTEST, **more: Any
) -> dict[str, Any]:
    """A check.ran line's settings for :class:`LogWriter`."""
    return {"at": at, "passed": passed, "ms": ms, "description": description, **more}


def edit(*checks: dict[str, Any], claim_s: float = 10, gate_s: float = 11) -> dict[str, Any]:
    """An accepted edit phase claimed at ``claim_s``, with the check lines ``checks``."""
    return {"name": "edit", "status": "accepted", "attempts": 1, "claim_s": claim_s,
            "gate_s": gate_s, "checks": list(checks)}  # fmt: skip


def summary_of(log: LogWriter, by: GroupBy = "phase") -> dict[str, Any]:
    aggregator = LogAggregator()
    aggregator.add_lines(log.lines)
    return summarize(aggregator, by)


def test_each_run_of_a_check_counts_its_time_and_whether_it_passed() -> None:
    """r1 failed pytest (2 s), then passed it (1 s); r2 passed at once (3 s): 3 runs, 2
    passed; p50 2 s, p95 3 s, 6 s in all; both task runs ended with it passing."""
    log = LogWriter()
    log.run("r1", "gate", [edit(check(5, False, 2000), check(10, True, 1000))],
            verdict="accepted", attempts=2)  # fmt: skip
    log.run("r2", "gate", [edit(check(10, True, 3000))], verdict="accepted", attempts=1)

    (row,) = summary_of(log)["checks"]

    assert (row["task"], row["mode"], row["phase"], row["phase_name"]) == ("fix", "gate", 1, "edit")
    assert (row["kind"], row["description"]) == ("command", PYTEST)
    assert (row["runs"], row["passed"], row["pass_rate"]) == (3, 2, 0.6667)
    assert row["duration_ms"] == {"p50": 2000.0, "p95": 3000.0, "percentiles": "exact",
                                  "relative_error": 0.0}  # fmt: skip
    assert row["total_ms"] == 6000.0
    assert (row["task_runs"], row["passed_at_end"], row["end_pass_rate"]) == (2, 2, 1.0)


def test_a_task_run_counts_once_per_check_with_the_outcome_of_its_last_run() -> None:
    """r1's pytest passed, then failed on the final disk: the run ends with it failing; its
    lint check, two positions on, passed: each check of the run counts on its own."""
    log = LogWriter()
    lint = check(10, True, 100, LINT, check=1)
    log.run("r1", "gate", [edit(check(5, True, 500), check(10, False, 500), lint)],
            verdict="rejected", attempts=2)  # fmt: skip

    rows = {row["description"]: row for row in summary_of(log)["checks"]}

    assert (rows[PYTEST]["runs"], rows[PYTEST]["passed"]) == (2, 1)
    assert (rows[PYTEST]["task_runs"], rows[PYTEST]["passed_at_end"]) == (1, 0)
    assert rows[PYTEST]["end_pass_rate"] == 0.0
    assert (rows[LINT]["task_runs"], rows[LINT]["passed_at_end"]) == (1, 1)


def test_a_run_that_never_ended_counts_its_check_runs_but_not_as_a_task_run() -> None:
    log = LogWriter()
    log.run("r1", "gate", [edit(check(5, True, 500))], verdict="accepted", attempts=1,
            completed=False)  # fmt: skip

    (row,) = summary_of(log)["checks"]

    assert (row["runs"], row["task_runs"], row["end_pass_rate"]) == (1, 0, None)


def test_the_time_of_checks_before_a_phase_completed_is_not_its_time_to_completion() -> None:
    """edit: claimed at 10 s after a 4 s check at 5 s: 6 s of the model's. Its check after
    the claim (1.5 s) came after it; summary, accepted by its gate at 20 s with no claim,
    waited for both: 20 - 5.5 = 14.5 s. The run's own time stays the wall clock's."""
    log = LogWriter()
    answer = {"name": "summary", "status": "accepted", "attempts": 1, "gate_s": 20}
    phases = [edit(check(5, False, 4000), check(10, True, 1500)), answer]
    log.run("r1", "gate", phases, verdict="accepted", attempts=2, duration_ms=21_000)

    (group,) = summary_of(log)["groups"]

    times = [phase["time_to_completion_ms"]["p50"] for phase in group["phases"]]
    assert times == [6000.0, 14_500.0]
    assert group["duration_ms"]["p50"] == 21_000.0


def test_checks_in_another_run_do_not_change_this_runs_time_to_completion() -> None:
    log = LogWriter()
    log.run("r1", "gate", [edit(claim_s=10)], verdict="accepted", attempts=1)
    log.run("r2", "gate", [edit(check(5, True, 4000), claim_s=10)], verdict="accepted",
            attempts=1)  # fmt: skip
    first, second = log.lines[:7], log.lines[7:]  # r2 has one line more: its check
    aggregator = LogAggregator()
    aggregator.add_lines([line for pair in zip(first, second, strict=False) for line in pair])
    aggregator.add_lines(second[len(first) :])

    (phase,) = summarize(aggregator)["groups"][0]["phases"]

    assert phase["time_to_completion_ms"]["p50"] == 6000.0  # r2's 10 s less 4; r1's 10 s
    assert phase["time_to_completion_ms"]["p95"] == 10_000.0


def test_the_tasks_own_checks_have_no_phase_and_come_after_the_phases() -> None:
    log = LogWriter()
    log.run("r1", "gate", [edit(check(10, True, 100, LINT))], verdict="accepted", attempts=1,
            checks=[check(50, True, 900)])  # fmt: skip

    rows = summary_of(log)["checks"]

    assert [(row["phase"], row["description"]) for row in rows] == [(1, LINT), (None, PYTEST)]
    assert rows[1]["phase_name"] is None and rows[1]["task_runs"] == 1


@pytest.mark.parametrize(
    ("by", "expected"),
    [
        ("phase", [("docs", "gate", 1, 1), ("fix", "gate", 1, 1), ("fix", "single-query", 1, 1)]),
        ("task", [("docs", None, 1, 1), ("fix", None, 1, 2)]),
        ("mode", [(None, "gate", None, 2), (None, "single-query", None, 1)]),
    ],
)
def test_grouping_by_task_merges_modes_and_by_mode_merges_tasks_and_phases(
    by: GroupBy, expected: list[tuple[str | None, str | None, int | None, int]]
) -> None:
    log = LogWriter()
    log.run("r1", "gate", [edit(check(10, True, 100))], verdict="accepted", attempts=1)
    log.run("r2", "single-query", [edit(check(10, False, 100))], verdict="rejected", attempts=1)
    log.run("r3", "gate", [edit(check(10, True, 100))], verdict="accepted", attempts=1,
            task="docs")  # fmt: skip

    rows = summary_of(log, by)["checks"]

    assert [(r["task"], r["mode"], r["phase"], r["runs"]) for r in rows] == expected


def check_line(**changes: Any) -> str:
    """A real check.ran line with ``changes``; a value None removes the field."""
    log = LogWriter()
    log.run("r1", "gate", [edit(check(5, True, 500))], verdict="accepted", attempts=1)
    event = json.loads(next(line for line in log.lines if '"check.ran"' in line))
    event.update(changes)
    return json.dumps({key: value for key, value in event.items() if value is not None})


@pytest.mark.parametrize(
    "corrupt",
    [{"duration_ms": -1}, {"duration_ms": 1e15}, {"duration_ms": None}, {"passed": "yes"},
     {"passed": None}, {"check": -1}, {"check": 1.5}, {"phase": 0}, {"kind": "k" * 101},
     {"kind": 3}, {"description": ["a"]}, {"description": None}],
)  # fmt: skip
def test_a_check_line_with_an_impossible_value_is_skipped_and_counts_nothing(
    corrupt: dict[str, Any],
) -> None:
    aggregator = LogAggregator()
    aggregator.add_lines([check_line(**corrupt)])

    summary = summarize(aggregator)

    assert (summary["skipped_lines"], summary["checks"]) == (1, [])


def test_a_description_past_the_bound_is_cut_not_refused() -> None:
    aggregator = LogAggregator()
    aggregator.add_lines([check_line(description="x" * 5000)])

    (row,) = summarize(aggregator)["checks"]

    assert len(row["description"]) == 2000 and row["description"].endswith("…")


def test_checks_past_the_bound_are_counted_as_unlisted(monkeypatch: pytest.MonkeyPatch) -> None:
    """With room for two checks, a third one's runs are counted, not tabulated."""
    monkeypatch.setattr(aggregate, "MAX_CHECK_ROWS", 2)
    log = LogWriter()
    runs = [check(10, True, 100, f"check {n}", check=n) for n in range(3)]
    log.run("r1", "gate", [edit(*runs, check(10, True, 100, "check 2", check=2))],
            verdict="accepted", attempts=1)  # fmt: skip

    summary = summary_of(log)

    assert [row["description"] for row in summary["checks"]] == ["check 0", "check 1"]
    assert summary["checks_unlisted"] == 2


def test_a_trend_counts_every_check_in_the_whole_report_once() -> None:
    """Two runs a day apart, each with a check: the report over days has both, as without."""
    log = LogWriter()
    log.run("r1", "gate", [edit(check(10, True, 100))], verdict="accepted", attempts=1)
    log.run("r2", "gate", [edit(check(10, False, 300))], verdict="rejected", attempts=1,
            start=START + timedelta(days=1))  # fmt: skip
    trend = PeriodAggregator("day", UTC)
    trend.add_lines(log.lines)
    trend.collect()

    summary = summarize_periods(trend, summarize(trend), "phase", "UTC")

    assert summary["checks"] == summary_of(log)["checks"]
    assert [period["runs"] for period in summary["periods"]] == [1, 1]


def repeats(log: LogWriter, mode: str, passing: int, failing: int) -> None:
    """Runs of fix in ``mode`` ending with pytest passing, then failing."""
    for index in range(passing + failing):
        ok = index < passing
        log.run(f"{mode}-{index}", mode, [edit(check(10, ok, 100))],
                verdict="accepted" if ok else "rejected", attempts=1)  # fmt: skip


def test_the_modes_are_compared_on_how_often_a_task_run_ends_with_the_check_passing() -> None:
    """gate 3 of 4, single-query 1 of 4: the same rates, errors and intervals as the mode
    comparison of runs with those counts."""
    log = LogWriter()
    repeats(log, "gate", 3, 1)
    repeats(log, "single-query", 1, 3)
    log.run("once", "gate", [edit(check(10, True, 100, LINT))], verdict="accepted", attempts=1)

    (row,) = summary_of(log)["check_comparison"]  # lint ran in one mode: nothing to compare

    runs = {"gate": RunStats(runs=4, accepted=3), "single-query": RunStats(runs=4, accepted=1)}
    same = comparison_row("fix", runs)
    assert (row["task"], row["phase"], row["phase_name"], row["description"]) == (
        "fix",
        1,
        "edit",
        PYTEST,
    )
    assert row["end_pass_rate"] == same["success_rate"] == {"gate": 0.75, "single-query": 0.25}
    assert row["task_runs"] == same["runs"] and row["passed_at_end"] == same["accepted"]
    assert row["gate_minus_single_query"] == same["gate_minus_single_query"] == 0.5
    for key in ("standard_error", "interval_95", "gate_minus_single_query_interval_95"):
        assert row[key] == same[key]
    assert row["gate_minus_unstructured"] is None


def test_a_real_runs_checks_in_the_report_are_those_of_its_run_report(tmp_path: Path) -> None:
    """examples/prove-the-fix through the runner and its event log: the tests fail once,
    then pass; the row says so, with the time the run report gives its checks."""
    run = prove_the_fix(tmp_path)
    aggregator = LogAggregator()
    aggregator.add_lines(run.log.read_text().splitlines())

    (row,) = summarize(aggregator)["checks"]

    (decided,) = run.report.phases[0].checks
    assert run.report.verdict == "accepted" and decided.passed
    assert (row["runs"], row["passed"], row["task_runs"], row["passed_at_end"]) == (2, 1, 1, 1)
    assert (row["phase"], row["description"]) == (1, decided.description)
    assert row["total_ms"] == run.report.phases[0].check_ms == run.report.check_ms
