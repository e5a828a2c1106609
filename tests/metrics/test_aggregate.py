"""Streaming aggregation of event logs: exact numbers, corrupt lines, the unparsed fast path."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from itertools import zip_longest
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from phasegate.agents.retry import RetryPolicy
from phasegate.metrics.aggregate import LogAggregator
from phasegate.metrics.summary import summarize
from phasegate.phases.pipeline import Pipeline
from phasegate.pipelines.report import PipelineReport
from phasegate.pipelines.runner import PipelineRunner
from phasegate.telemetry.log import EventLog
from phasegate.testing import Script, ScriptedAgent
from phasegate.testing.event_log import synthetic_log_lines
from tests.helpers.cli import phasegate
from tests.helpers.fuzz import bounded_memory
from tests.helpers.logs import START, LogWriter, three_runs


def summary_of(lines: list[str] | list[bytes], **options: Any) -> dict[str, Any]:
    """The summary of ``lines``; ``since`` and ``by`` as the report command takes them."""
    aggregator = LogAggregator(since=options.pop("since", None))
    aggregator.add_lines(lines)
    return summarize(aggregator, **options)


def group(summary: dict[str, Any], mode: str) -> dict[str, Any]:
    """The group of ``mode`` in a summary grouped by phase."""
    return next(g for g in summary["groups"] if g["mode"] == mode)


def test_runs_phases_and_modes_are_counted_exactly() -> None:
    """Per mode: runs, success, first-attempt, attempts, tool errors, mismatches, tokens."""
    summary = summary_of(three_runs().lines)

    assert (summary["runs"], summary["skipped_lines"]) == (3, 0)
    gate = group(summary, "gate")
    assert (gate["runs"], gate["success_rate"], gate["first_attempt_rate"]) == (1, 1.0, 0.0)
    assert (gate["mean_attempts"], gate["tool_errors"], gate["mismatch_rate"]) == (2.0, 2, 0.0)
    assert (gate["input_tokens"], gate["cost_usd"]) == (1000, 0.5)
    assert gate["attempts_histogram"] == {"2": 1}
    edit = gate["phases"][0]
    assert (edit["name"], edit["completion_rate"], edit["mean_attempts"]) == ("edit", 1.0, 2.0)
    assert edit["tool_errors"] == 2
    single = group(summary, "single-query")
    assert (single["success_rate"], single["mismatch_rate"]) == (0.0, 1.0)
    assert single["phases"][0]["completion_rate"] == 0.0


def test_a_read_outside_the_work_directory_is_no_reconciliation_mismatch() -> None:
    """Only claims, tools and disk disagreeing count as a mismatch, not every finding."""
    log = LogWriter()
    phases = [{"name": "edit", "status": "accepted", "attempts": 1, "gate_s": 1}]
    log.run("r1", "gate", phases, verdict="accepted", attempts=1,
            findings=["read_outside_workdir"])  # fmt: skip
    log.run("r2", "gate", phases, verdict="accepted", attempts=1,
            findings=["read_outside_workdir", "change_without_tool"])  # fmt: skip

    assert group(summary_of(log.lines), "gate")["mismatch_rate"] == 0.5


def test_the_mismatch_codes_are_the_reconciliation_codes_of_the_validators() -> None:
    """aggregate spells the codes out (importing the validators would double the report's
    start-up); they must stay the same set."""
    from phasegate.metrics import aggregate
    from phasegate.validators import reconcile

    validators_codes = {str(code) for code in reconcile.RECONCILIATION_CODES}
    assert validators_codes == aggregate.RECONCILIATION_CODES


def test_time_to_completion_runs_from_the_start_to_the_claim_the_gate_accepted() -> None:
    """edit was claimed at 3 s and accepted at 20 s: 3 s; summary had no claim: its gate, 30 s."""
    gate = group(summary_of(three_runs().lines), "gate")

    edit, answer = (phase["time_to_completion_ms"] for phase in gate["phases"])
    assert (edit["p50"], answer["p50"], edit["percentiles"]) == (3000.0, 30_000.0, "exact")
    bins = {b["from_ms"]: b["count"] for b in edit["histogram"]}
    assert bins[1000] == 1 and sum(bins.values()) == 1


def test_eight_runs_report_the_nearest_rank_median_exactly_and_say_so() -> None:
    """Issue 29's case: the 4th of 8 run times is 1224.0 ms (5 % buckets said 1210.7)."""
    log = LogWriter()
    phases = [{"name": "edit", "status": "accepted", "attempts": 1, "gate_s": 1}]
    for index, ms in enumerate([3045.6, 1105.3, 1224.0, 830.5, 2210.0, 1502.2, 912.0, 1390.8]):
        log.run(f"r{index}", "gate", phases, verdict="accepted", attempts=1, duration_ms=ms)

    times = group(summary_of(log.lines), "gate")["duration_ms"]

    assert times == {"p50": 1224.0, "p95": 3045.6, "percentiles": "exact", "relative_error": 0.0}


def test_a_group_merged_past_ten_thousand_runs_says_its_percentiles_are_approximate() -> None:
    """Two tasks of 5,001 gate runs each: exact per task, a sketch within 1 % for the mode."""
    log = LogWriter()
    phases = [{"name": "edit", "status": "accepted", "attempts": 1, "gate_s": 1}]
    for index in range(10_002):
        log.run(f"r{index}", "gate", phases, verdict="accepted", attempts=1,
                task=f"t{index % 2}", duration_ms=1000 + index)  # fmt: skip

    per_task = summary_of(log.lines)["groups"][0]["duration_ms"]
    (per_mode,) = (g["duration_ms"] for g in summary_of(log.lines, by="mode")["groups"])

    assert (per_task["p50"], per_task["percentiles"]) == (6000.0, "exact")
    assert (per_mode["percentiles"], per_mode["relative_error"]) == ("approximate", 0.01)
    assert per_mode["p50"] == pytest.approx(6000, rel=0.01)
    assert per_mode["p95"] == pytest.approx(1000 + 9501, rel=0.01)


def test_the_mode_comparison_gives_success_rates_and_their_differences() -> None:
    """gate 100 %, single-query 0 %, unstructured 100 %: +1.0 and 0.0."""
    (row,) = summary_of(three_runs().lines)["mode_comparison"]

    assert row["success_rate"] == {"gate": 1.0, "single-query": 0.0, "unstructured": 1.0}
    assert (row["gate_minus_single_query"], row["gate_minus_unstructured"]) == (1.0, 0.0)


@pytest.mark.parametrize(("by", "keys"), [
    ("task", [("fix", None)]),
    ("mode", [(None, "gate"), (None, "single-query"), (None, "unstructured")]),
    ("phase", [("fix", "gate"), ("fix", "single-query"), ("fix", "unstructured")]),
])  # fmt: skip
def test_grouping_by_task_mode_or_phase_merges_the_right_runs(
    by: str, keys: list[tuple[str | None, str | None]]
) -> None:
    """--by task merges modes (2 of 3 runs succeed); --by mode has no phase rows."""
    summary = summary_of(three_runs().lines, by=by)

    assert [(g["task"], g["mode"]) for g in summary["groups"]] == keys
    if by == "task":
        (merged,) = summary["groups"]
        assert (merged["runs"], merged["success_rate"]) == (3, 0.6667)
        assert merged["phases"][0]["completion_rate"] == 0.6667
    if by == "mode":
        assert all(g["phases"] == [] for g in summary["groups"])


def test_corrupt_truncated_and_mistyped_lines_are_counted_and_skipped() -> None:
    """Nothing crashes; the good runs still count; blank lines are not lines."""
    lines = [
        *three_runs().lines,
        "not json at all",
        '{"event": "run.completed", "task": "fix", "mode": "ga',
        "[1, 2, 3]",
        '{"event": "phase.completed", "task": "fix", "mode": "gate", "phase": "one", '
        '"run_id": "x", "status": "accepted"}',
        "",
        '{"event": "some.future.event", "x": 1}',
        '{"event": ["run.completed"], "x": 1}',
        '{"event": {"name": "run.completed"}}',
    ]

    summary = summary_of(lines)

    assert summary["skipped_lines"] == 4
    assert summary["lines"] == len(three_runs().lines) + 7
    assert summary["runs"] == 3


def test_the_unparsed_fast_path_gives_the_same_numbers_as_parsing_everything() -> None:
    """Compact JSON never takes the fast path; the summaries must be identical."""
    lines = list(synthetic_log_lines(3000, seed=7))
    compact = [json.dumps(json.loads(line), separators=(",", ":")) for line in lines]

    assert summary_of(lines) == summary_of(compact)


def test_since_drops_older_events() -> None:
    """Runs before --since are not counted."""
    log = three_runs()
    later = START + timedelta(days=2)
    log.run("r4", "gate", [{"name": "edit", "status": "rejected", "attempts": 3}],
            verdict="rejected", attempts=3, start=later)  # fmt: skip

    summary = summary_of(log.lines, since=START + timedelta(days=1))

    assert summary["runs"] == 1
    assert group(summary, "gate")["success_rate"] == 0.0


def test_bytes_and_text_lines_are_read_alike() -> None:
    """Files are read as bytes, tests and stdin may give text."""
    lines = three_runs().lines

    assert summary_of(lines) == summary_of([(line + "\n").encode() for line in lines])


PIPELINE_FIX: dict[str, Any] = {
    "name": "fix",  # the task's name too: a pipeline's lines must not leak into its groups
    "stages": [
        {"name": "spec", "prompt": "Write spec.md.", "exit_when": [{"file_exists": "spec.md"}]},
        {
            "name": "build",
            "prompt": "Extend spec.md.",
            "exit_when": [{"min_lines": {"path": "spec.md", "n": 2}}],
            "on_fail": {"retry": 0, "back_to": "spec"},
        },
    ],
}
PIPELINE_REPLIES: list[dict[str, Any]] = [
    {"contains": "Stage 1 of 2: spec", "error": {"status": 529}},
    {"contains": "Stage 1 of 2", "tools": [{"Write": {"file_path": "spec.md", "content": "a\n"}}]},
    {"when": "tool_result", "text": "Spec written."},
    {"contains": "Stage 2 of 2: build",
     "tools": [{"Edit": {"file_path": "gone.py", "old_string": "a", "new_string": "b"}}]},
    {"when": "tool_error", "text": "Nothing to build."},
    {"contains": "goes back to stage spec",
     "tools": [{"Write": {"file_path": "spec.md", "content": "a\nb\n"}}]},
    {"when": "tool_result", "text": "Spec extended."},
    {"contains": "Stage 2 of 2: build", "text": "Built."},
]  # fmt: skip
"""A retried session, failed and successful tool calls, a failed check and a revision."""


@dataclass(frozen=True, slots=True)
class PipelineLog:
    """A real pipeline run's log lines and its report."""

    lines: list[str]
    report: PipelineReport


def pipeline_log(tmp_path: Path) -> PipelineLog:
    """The log lines EventLog writes for a real pipeline run named like the task, "fix"."""
    work = tmp_path / "pipeline-work"
    work.mkdir()
    log_file = tmp_path / "pipeline.jsonl"
    agent = ScriptedAgent(Script.model_validate({"replies": PIPELINE_REPLIES}))
    retry = RetryPolicy(session_retries=1, initial_delay=0.01, max_delay=0.02)
    with EventLog(file=log_file) as log:
        report = PipelineRunner(agent, on_event=log, retry=retry).run_sync(
            Pipeline.model_validate(PIPELINE_FIX), work
        )
    assert report.verdict == "accepted", report.error
    lines = log_file.read_text().splitlines()
    events = [json.loads(line) for line in lines]
    assert {"retry.scheduled", "stage.revision"} <= {e["event"] for e in events}
    assert any(e["event"] == "tool.called" and e["ok"] is False for e in events)
    return PipelineLog(lines, report)


def mixed_with_pipeline(task_lines: list[str], pipeline_lines: list[str]) -> list[str]:
    """``task_lines`` with a pipeline run's lines interleaved, one by one."""
    pairs = zip_longest(task_lines, pipeline_lines)
    return [line for pair in pairs for line in pair if line is not None]


def without_pipeline(summary: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``summary`` without its pipeline group (mode ``session``), and that group."""
    (pipeline,) = (g for g in summary["groups"] if g["mode"] == "session")
    rest = {**summary, "groups": [g for g in summary["groups"] if g is not pipeline]}
    return {**rest, "runs": rest["runs"] - pipeline["runs"]}, pipeline


@pytest.mark.parametrize("by", ["phase", "mode"])
def test_a_pipeline_run_in_a_log_is_a_group_of_its_own_and_the_task_runs_read_as_if_alone(
    by: str, tmp_path: Path
) -> None:
    """The pipeline's group is keyed by its isolation; its attempts are its stages' checks,
    its duration and tokens its report's, its failed tool call counted; no phase rows."""
    task_lines, pipeline = three_runs().lines, pipeline_log(tmp_path)
    mixed = mixed_with_pipeline(task_lines, pipeline.lines)

    alone, together = summary_of(task_lines, by=by), summary_of(mixed, by=by)

    assert together.pop("lines") == len(mixed)
    assert alone.pop("lines") == len(task_lines)
    tasks, group = without_pipeline(together)
    assert tasks == alone
    assert together["skipped_lines"] == 0
    report = pipeline.report
    attempts = sum(stage.attempts for stage in report.stages)
    assert attempts == 4
    assert (group["runs"], group["success_rate"], group["first_attempt_rate"]) == (1, 1.0, 0.0)
    assert (group["mean_attempts"], group["attempts_histogram"]) == (attempts, {"4": 1})
    assert group["duration_ms"]["p50"] == pytest.approx(max(report.duration_ms, 1), rel=0.05)
    assert (group["input_tokens"], group["tool_errors"]) == (report.usage.input_tokens, 1)
    assert group["phases"] == []


def two_stage_run(run_id: str, checks: list[bool]) -> list[str]:
    """The lines of an accepted run of a two-stage pipeline with ``checks`` (passed or not)."""
    common = {"run_id": run_id, "task": "p", "mode": "gate", "isolation": "session",
              "schema_version": 3, "timestamp": START.isoformat()}  # fmt: skip
    events = [{"event": "pipeline.started", **common, "agent": "scripted", "workdir": "/w",
               "stages": 2, "stage": 1, "resumed": False}]  # fmt: skip
    events += [{"event": "stage.checked", **common, "stage": 1, "name": "s", "attempt": 1,
                "trigger": "stop", "passed": ok, "failed": []} for ok in checks]  # fmt: skip
    events.append({"event": "pipeline.completed", **common, "verdict": "accepted",
                   "stages_accepted": 2, "revisions": 0, "sessions": 1, "duration_ms": 5,
                   "input_tokens": 1, "output_tokens": 1, "cost_usd": None,
                   "error": None})  # fmt: skip
    return [json.dumps(event) for event in events]


def test_a_pipeline_that_passed_every_stage_at_once_is_accepted_at_the_first_attempt() -> None:
    """Its attempts are as many as its stages; one more check and it was not."""
    lines = [*two_stage_run("p1", [True, True]), *two_stage_run("p2", [True, False, True])]

    (group,) = summary_of(lines)["groups"]

    assert (group["runs"], group["first_attempt_rate"], group["mean_attempts"]) == (2, 0.5, 2.5)


def test_phasegate_report_on_a_mixed_log_gives_the_task_runs_summary(tmp_path: Path) -> None:
    """Through the CLI: exit 0, nothing skipped, the task runs' JSON as for them alone, and
    the pipeline's group besides; the other formats render too."""
    task_lines = three_runs().lines
    log_file = tmp_path / "mixed.jsonl"
    mixed = mixed_with_pipeline(task_lines, pipeline_log(tmp_path).lines)
    log_file.write_text("\n".join(mixed) + "\n")

    done = phasegate("report", log_file, "--format", "json")
    html = phasegate("report", log_file, "--format", "html", "-o", tmp_path / "report.html")

    assert done.returncode == 0, done.stderr
    assert "skipped" not in done.stderr
    summary, _ = without_pipeline(json.loads(done.stdout))
    alone = summary_of(task_lines)
    assert summary.pop("lines") > alone.pop("lines")
    assert summary == alone
    assert html.returncode == 0, html.stderr


def with_fields(line: str, **fields: Any) -> str:
    """``line`` (one JSON event) with ``fields`` replaced; a field given as ``bytes`` is
    written raw (numbers JSON can hold but Python's json would not write)."""
    event = json.loads(line)
    raw = {name: value for name, value in fields.items() if isinstance(value, bytes)}
    event.update({name: f"@{name}@" for name in raw})
    event.update({k: v for k, v in fields.items() if not isinstance(v, bytes)})
    text = json.dumps(event)
    for name, value in raw.items():
        text = text.replace(f'"@{name}@"', value.decode())
    return text


def last_of(lines: list[str], event: str) -> int:
    """The position of the last line of ``event`` in ``lines``."""
    return max(i for i, line in enumerate(lines) if json.loads(line)["event"] == event)


@pytest.mark.parametrize(
    "corrupt",
    [
        {"duration_ms": b"1e999"},
        {"duration_ms": b"9" * 400},
        {"duration_ms": b"NaN"},
        {"duration_ms": -100_000},
        {"duration_ms": 1e15},
        {"attempts": -2000},
        {"attempts": b"9" * 400},
        {"attempts": 10**9},
        {"attempts": 2.5},
        {"attempts": "2"},
        {"cost_usd": -5000},
        {"cost_usd": b"-1e999"},
        {"cost_usd": b"Infinity"},
        {"cost_usd": 1e12},
        {"input_tokens": -1},
        {"output_tokens": b"9" * 400},
    ],
)
def test_a_run_line_with_an_impossible_number_is_skipped_not_averaged_in(
    corrupt: dict[str, Any],
) -> None:
    """Non-finite, negative, absurdly large or mistyped numbers make the line corrupt: it is
    counted in skipped_lines, nothing crashes, and the other runs' numbers are untouched."""
    lines = three_runs().lines
    clean = summary_of(lines)
    at = last_of(lines, "run.completed")
    lines[at] = with_fields(lines[at], **corrupt)

    summary = summary_of(lines)

    assert summary["skipped_lines"] == 1
    assert summary["runs"] == 2
    unstructured = group(summary, "unstructured")
    assert unstructured["runs"] == 0 and unstructured["mean_attempts"] is None
    for mode in ("gate", "single-query"):
        assert group(summary, mode) == group(clean, mode)


@pytest.mark.parametrize(
    "corrupt",
    [{"attempts": -1}, {"cost_usd": b"1e999"}, {"phase": 0}, {"phase": b"9" * 400},
     {"output_tokens": -5}, {"input_tokens": 1e300}],
)  # fmt: skip
def test_a_phase_line_with_an_impossible_value_leaves_no_partial_count(
    corrupt: dict[str, Any],
) -> None:
    """A corrupt phase.completed line changes nothing: no run, name or tokens are counted
    from it before the bad field is met."""
    lines = three_runs().lines
    clean = group(summary_of(lines), "unstructured")["phases"]
    at = last_of(lines, "phase.completed")
    lines[at] = with_fields(lines[at], name="renamed", **corrupt)

    summary = summary_of(lines)

    assert summary["skipped_lines"] == 1
    assert group(summary, "unstructured")["phases"] == clean[:1]
    assert group(summary, "gate")["phases"][1]["name"] == "summary"


def test_a_cost_no_line_recorded_is_unknown_not_zero() -> None:
    """Runs whose lines carry ``cost_usd: null`` report a null cost; a real zero stays 0."""
    lines = three_runs().lines
    unknown = [with_fields(line, cost_usd=None) if "cost_usd" in line else line for line in lines]
    free = [with_fields(line, cost_usd=0) if "cost_usd" in line else line for line in lines]

    gate_unknown, gate_free = group(summary_of(unknown), "gate"), group(summary_of(free), "gate")

    assert gate_unknown["cost_usd"] is None
    assert gate_unknown["phases"][0]["cost_usd"] is None
    assert gate_free["cost_usd"] == 0.0


def test_a_group_with_some_costs_known_sums_the_known_ones() -> None:
    """One run with a cost and one without: the group's cost is the known one."""
    lines = three_runs().lines
    at = last_of(lines, "run.completed")
    lines[at] = with_fields(lines[at], cost_usd=None)

    summary = summary_of(lines, by="task")

    assert summary["groups"][0]["cost_usd"] == 1.0


def checked_run() -> list[str]:
    """A run whose phase ran a check twice (failed, then passed) and that has one of its own."""
    log = LogWriter()
    runs = [
        {"at": 2, "passed": False, "ms": 900, "description": "tests"},
        {"at": 4, "passed": True, "ms": 800, "description": "tests"},
    ]
    phase = {
        "name": "edit",
        "status": "accepted",
        "attempts": 2,
        "claim_s": 3,
        "gate_s": 4,
        "checks": runs,
    }
    log.run(
        "c1",
        "gate",
        [phase],
        verdict="accepted",
        attempts=2,
        checks=[{"at": 5, "passed": True, "ms": 10, "description": "said"}],
    )
    return log.lines  # fmt: skip


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
    | st.sampled_from([10**400, -(10**400), "2026-11-01T12:00:00+00:00", "accepted", "r1"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=3),
    max_leaves=10,
)  # fmt: skip
"""Any JSON value, with the integers and strings a log really holds among them."""


@pytest.mark.fuzz
@given(
    st.lists(
        st.tuples(
            st.sampled_from([json.loads(line) for line in [*three_runs().lines[:30],
                                                            *checked_run()]]),
            st.dictionaries(
                st.sampled_from(["phase", "attempts", "duration_ms", "cost_usd", "input_tokens",
                                 "timestamp", "run_id", "accepted", "status", "verdict", "ok",
                                 "task", "mode", "name", "findings", "event", "check", "kind",
                                 "description", "passed"]),
                _JSON_VALUES, max_size=4),
        ),
        max_size=30,
    )
)  # fmt: skip
def test_events_with_any_values_in_their_fields_never_crash_the_report(
    events: list[tuple[dict[str, Any], dict[str, Any]]],
) -> None:
    """Real events (check.ran lines among them) with fields replaced by any JSON value (huge
    integers, infinities as floats, wrong types): every line is counted or skipped, no
    foreign error escapes, and every number in the summary is finite and not negative."""
    lines = [json.dumps({**event, **changes}, allow_nan=True) for event, changes in events]

    with bounded_memory():
        summary = summary_of(lines)

    assert 0 <= summary["skipped_lines"] <= summary["lines"] == len(lines)
    numbers = list(_numbers(summary))
    assert all(math.isfinite(number) and number >= 0 for number in numbers), numbers


def _numbers(value: Any) -> Iterator[float]:
    """Every number in a summary (differences of rates excepted: they may be negative)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not key.startswith("gate_minus_"):
                yield from _numbers(item)
    elif isinstance(value, list):
        for item in value:
            yield from _numbers(item)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield value
