"""The grader's tokens and cost in a pipeline's report: apart per stage, over every visit and
process, summed for the run and part of its usage, so that agent + grader + unattributed =
the run; each stage's checks keep the grader's verdicts, through the state file too."""

from __future__ import annotations

from pathlib import Path

import pytest

from phasegate.evidence.transcript import Usage
from phasegate.pipelines.report import PipelineReport
from phasegate.pipelines.state import CheckResult, load_state, save_state
from phasegate.pipelines.visit import StageCheck
from tests.helpers.graded import (
    GRADER_SESSION,
    HOSTILE_REASON,
    graded,
    graded_pipeline,
    ran,
    verdict,
)
from tests.helpers.usage import COUNTS, assert_usage_adds_up

GRADER = GRADER_SESSION


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PipelineReport:
    report = graded_pipeline(tmp_path, monkeypatch, reason=HOSTILE_REASON).report
    assert isinstance(report, PipelineReport)
    return report


def test_each_stage_reports_its_graders_usage_and_the_run_adds_agent_grader_and_unattributed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two stages, each graded once: each stage's grader_usage is its session's, the run's is
    their sum, and the run's usage is the stages' agent usage, plus that, plus what no stage
    owns (the agent's side request)."""
    report = _run(tmp_path, monkeypatch)

    assert report.verdict == "accepted"
    assert [s.grader_usage for s in report.stages] == [GRADER, GRADER]
    assert report.grader_usage == GRADER + GRADER
    assert [s.usage.input_tokens for s in report.stages] == [1000, 3000]
    assert report.unattributed_usage.input_tokens == 50
    agent = sum((s.usage for s in report.stages), report.unattributed_usage)
    for name in COUNTS:
        assert getattr(report.usage, name) == getattr(agent, name) + getattr(
            report.grader_usage, name
        ), name
    assert report.usage.cost_usd == pytest.approx(0.5 + 2 * 0.012)  # agent, two sessions
    assert_usage_adds_up(report.model_dump(mode="json"))
    state = load_state(tmp_path / "project")
    assert_usage_adds_up(state.model_dump(mode="json"))  # the state agrees


def test_a_stages_checks_keep_the_graders_verdicts_in_the_report_and_the_state_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reason is kept as the grader gave it (untrusted text, shown escaped by each view);
    a check no grader judged carries no criteria."""
    report = _run(tmp_path, monkeypatch)

    exists, rubric = report.stages[0].checks
    assert [(c.id, c.verdict, c.reason) for c in rubric.criteria] == [
        ("c1", "met", "every endpoint is named"),
        ("c2", "met", HOSTILE_REASON),
    ]
    assert "criteria" not in exists.model_dump()
    workdir = tmp_path / "project"
    saved = load_state(workdir).stages[0].checks[1]
    assert saved == rubric
    save_state(workdir, load_state(workdir))  # written back as read
    assert load_state(workdir).stages[0].checks[1].criteria == rubric.criteria


def test_a_checks_grader_usage_is_its_exit_checks_and_its_tasks_check_runs() -> None:
    """A stage check's grader sessions: an exit check's and the stage task's check runs';
    an answer kept for equal evidence adds nothing."""
    one, two = Usage(input_tokens=5, cost_usd=0.1), Usage(output_tokens=7, cost_usd=0.2)
    check = StageCheck(
        outcomes=(graded(usage=one), graded()),
        task_feedback=None,
        files_changed=(),
        check_runs=(ran(graded(usage=two)), ran(graded())),
    )

    assert check.grader_usage == one + two
    assert StageCheck((), None, ()).grader_usage == Usage()


def test_a_check_result_reads_back_the_criteria_an_outcome_gives() -> None:
    """The state's check result is made from an outcome's own dict: a graded rubric's
    criteria are part of it, and reading them back needs no other field."""
    outcome = graded((verdict("c1", "not_met", HOSTILE_REASON),), usage=GRADER)

    result = CheckResult(**outcome.as_dict())

    assert result.criteria[0].model_dump() == outcome.criteria[0].as_dict()
