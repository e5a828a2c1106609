"""The pipeline report and its event (phasegate.pipelines.report): the report holds every
process's figures, read from the state; each process's ``pipeline.completed`` its own."""

from __future__ import annotations

from pathlib import Path

from phasegate.evidence.confinement import Blocked
from phasegate.evidence.overhead import GateOverhead
from phasegate.evidence.transcript import Usage
from phasegate.pipelines.report import ProcessFigures, completed_event, pipeline_report
from phasegate.pipelines.state import (
    PipelineState,
    StageRecord,
    load_state,
    save_state,
    state_path,
)


def _attempt(target: str) -> Blocked:
    return Blocked(kind="host", tool="Bash", tool_use_id=f"toolu_{target}", target=target,
                   detail=f"Connection to {target} blocked by network allowlist")  # fmt: skip


def _state() -> PipelineState:
    return PipelineState(
        pipeline="fetching",
        digest="0123456789abcdef",
        run_id="run-1",
        isolation="session",
        stage=1,
        stages=[
            StageRecord(index=1, name="plan", status="accepted", blocked=[_attempt("a.test:443")]),
            StageRecord(index=2, name="build", status="running",
                        blocked=[_attempt("b.test:443"), _attempt("c.test:80")]),
        ],
    )  # fmt: skip


def test_a_reports_blocked_attempts_are_its_stages_in_order_kept_through_the_state_file(
    tmp_path: Path,
) -> None:
    """A resumed run's report reads the state the killed process saved: its attempts stay."""
    save_state(tmp_path, _state())
    report = pipeline_report(load_state(tmp_path), agent="claude", state_file=state_path(tmp_path))
    assert [b.target for b in report.blocked] == ["a.test:443", "b.test:443", "c.test:80"]
    assert "blocked" not in pipeline_report(
        PipelineState(pipeline="p", digest="d", run_id="r", isolation="session", stages=[]),
        agent="claude",
        state_file=state_path(tmp_path),
    ).model_dump(mode="json")


def test_the_completed_event_carries_this_process_figures_and_the_runs_counts(
    tmp_path: Path,
) -> None:
    report = pipeline_report(_state(), agent="claude", state_file=state_path(tmp_path))
    first = ProcessFigures(
        duration_ms=1500,
        usage=Usage(input_tokens=100, output_tokens=20),
        unattributed=Usage(input_tokens=7),
        overhead=GateOverhead(requests=2, input_tokens=100, text_tokens=9),
        refusals=1,
        blocked=1,
    )
    second = ProcessFigures(duration_ms=500, usage=Usage(input_tokens=50, output_tokens=5),
                            blocked=2)  # fmt: skip
    figures = first + second
    event = completed_event(report, figures).as_fields()
    assert (event["duration_ms"], event["input_tokens"], event["output_tokens"]) == (2000, 150, 25)
    assert (event["refusals"], event["blocked"], event["stages_accepted"]) == (1, 3, 1)
    assert event["unattributed_usage"]["input_tokens"] == 7
    assert (event["overhead"]["requests"], event["overhead"]["text_tokens"]) == (2, 9)
