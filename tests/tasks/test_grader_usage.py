"""The grader's tokens and cost in a task's report: apart per phase (the task's own checks in
the last), summed for the run, and part of the run's usage, so that agent + grader +
unattributed = the run; each graded rubric keeps its criteria."""

from __future__ import annotations

from pathlib import Path

import pytest

from phasegate.evidence.transcript import Entry, RunResult, Transcript, TurnUsage, Usage
from phasegate.tasks.assembly import RunFacts, assemble_report
from phasegate.tasks.report import RunReport
from phasegate.validators.check_runs import CheckRun, grader_usage
from phasegate.validators.judge import Judgment, PhaseJudgment
from phasegate.validators.reconcile import reconcile
from tests.helpers.graded import (
    GRADER_SESSION,
    HOSTILE_REASON,
    graded,
    graded_task,
    ran,
    verdict,
)
from tests.helpers.usage import COUNTS, assert_usage_adds_up

ONE = Usage(input_tokens=300, output_tokens=40, cache_read_input_tokens=7, cost_usd=0.012)
TWO = Usage(input_tokens=500, output_tokens=60, cache_creation_input_tokens=9, cost_usd=0.02)
TASK = Usage(input_tokens=200, output_tokens=30, cost_usd=0.008)


def _phase(index: int, start: int, end: int, checks: tuple[CheckRun, ...]) -> PhaseJudgment:
    return PhaseJudgment(
        index=index, name=f"p{index}", start=start, end=end, issues=(), reached=True,
        marker_seen=True, completed_by="marker", tools={}, tool_errors=0, files_changed=(),
        reconciliation=reconcile([], [], None), checks=checks,
    )  # fmt: skip


def _transcript() -> Transcript:
    """A response in each phase's window, and a result that counts a side request too."""
    entries: list[Entry] = [
        TurnUsage(message_id="m1", usage=Usage(input_tokens=1000, output_tokens=100), final=True),
        TurnUsage(message_id="m2", usage=Usage(input_tokens=2000, output_tokens=300), final=True),
        RunResult(usage=Usage(input_tokens=3050, output_tokens=410, cost_usd=0.75)),
    ]
    return Transcript(entries=tuple(entries))


def _report(runs: list[CheckRun], *, last: tuple[CheckRun, ...] = ()) -> RunReport:
    """The report of a two-phase run whose gate made ``runs`` (the task's own checks as they
    last ran: ``last``)."""
    phases = (
        _phase(1, 0, 1, tuple(r for r in runs if r.phase == 1)),
        _phase(2, 1, 3, tuple(r for r in runs if r.phase == 2)),
    )
    judgment = Judgment(phases=phases, output=None, files_changed=(), files_claimed=(),
                        reconciliation=reconcile([], [], None), task_checks=last)  # fmt: skip
    facts = RunFacts(run_id="r1", task="graded", mode="gate", agent="scripted",
                     transcript=_transcript(), times=(), attempts=2, phase_attempts=lambda _: 1,
                     duration_ms=10, retries=0, api_retries=0, error=None,
                     check_runs=tuple(runs))  # fmt: skip
    return assemble_report(judgment, facts)


def test_each_phase_reports_its_graders_usage_and_the_run_adds_agent_grader_and_unattributed() -> (
    None
):
    """The task's own rubric counts in the last phase; an answer kept for equal evidence
    (no session ran) counts nothing again."""
    kept = graded()  # grader_usage None: kept for equal evidence
    runs = [
        ran(graded(usage=ONE), phase=1, run=1),
        ran(kept, phase=1, run=2),
        ran(graded(usage=TWO), phase=2, position=1, run=2),
        ran(graded(usage=TASK), phase=None, run=2),
    ]

    report = _report(runs, last=(runs[-1],))

    first, second = report.phases
    assert first.grader_usage == ONE
    assert second.grader_usage == TWO + TASK
    assert report.grader_usage == ONE + TWO + TASK == grader_usage(runs)
    agent = first.usage + second.usage + report.unattributed_usage
    assert (agent.input_tokens, agent.output_tokens) == (3050, 410)  # the transcript's run
    for name in COUNTS:
        assert getattr(report.usage, name) == getattr(agent, name) + getattr(
            report.grader_usage, name
        ), name
    assert report.usage.cost_usd is not None
    assert abs(report.usage.cost_usd - (0.75 + 0.012 + 0.02 + 0.008)) < 1e-9
    assert_usage_adds_up(report.model_dump(mode="json"))


def test_a_run_without_a_grader_reports_zero_grader_usage_and_the_agents_usage_alone() -> None:
    report = _report([])

    assert report.grader_usage == Usage() and all(p.grader_usage == Usage() for p in report.phases)
    assert report.usage == Usage(input_tokens=3050, output_tokens=410, cost_usd=0.75)
    assert_usage_adds_up(report.model_dump(mode="json"))


def test_a_graded_rubric_keeps_each_criterion_in_the_report_and_its_json_reads_back() -> None:
    """The verdicts and reasons (untrusted text, kept as it is) are in the phase's checks and
    the task's own; a check no grader judged has no criteria key at all."""
    verdicts = (verdict("c1", "met"), verdict("c2", "cannot_tell", HOSTILE_REASON))
    own = ran(graded(verdicts, usage=TASK), phase=None, run=2)
    runs = [ran(graded(usage=ONE), phase=1), own]

    report = _report(runs, last=(own,))
    data = report.model_dump(mode="json")

    assert data["checks"][0]["criteria"] == [v.as_dict() for v in verdicts]
    assert data["phases"][0]["checks"][0]["criteria"][0]["verdict"] == "met"
    assert RunReport.model_validate(data) == report.model_copy(update={"transcript": None})
    plain = own.outcome.__class__(kind="file_exists", description="a.md exists", ok=True,
                                  detail="a.md exists")  # fmt: skip
    assert "criteria" not in _report([ran(plain)]).model_dump(mode="json")["phases"][0]["checks"][0]


def test_a_runs_report_adds_up_with_its_graders_sessions_counted_once_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the runner: a phase's rubric is graded at every judgment its evidence changed
    for, the task's own once at the end (in the last phase); every session counted once."""
    run = graded_task(tmp_path, monkeypatch)
    report = run.report
    assert isinstance(report, RunReport)

    assert report.verdict == "accepted", report.issues
    # Phase 1 at both judgments (the disk changed in between), phase 2 and the task's own at
    # the second: four sessions, the task's in the last phase.
    assert len(run.grader.asked) == 4
    session = GRADER_SESSION
    assert [p.grader_usage for p in report.phases] == [session + session, session + session]
    assert report.grader_usage == session + session + session + session
    assert report.usage.input_tokens == 1000 + 2000 + 30 + 4 * session.input_tokens
    assert_usage_adds_up(report.model_dump(mode="json"))
