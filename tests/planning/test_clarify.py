"""The clarify phase's task and answer check, without an agent."""

from __future__ import annotations

from pathlib import Path

from phasegate.planning.reference import plan_task, task_inputs
from phasegate.planning.clarify import clarify_task, proposal_check
from tests.helpers.inputs import ci_task, python_project


def test_a_proposal_after_an_other_answer_is_accepted_when_it_asks_the_follow_up(
    tmp_path: Path,
) -> None:
    """The person chose Other (specify) for target: the follow-up is what to ask, and the
    answer is not mistaken for an inferred value."""
    project = python_project(tmp_path / "p")
    plan = plan_task(ci_task(), project, responses={"target": "Other (specify)"})
    proposal = {
        "inferred": {"team": {"value": "core", "source": "CODEOWNERS"}},
        "questions": [q.model_dump(mode="json") for q in plan.questions],
    }
    assert [q.id for q in plan.questions] == ["target__other"]
    assert proposal_check(task_inputs(ci_task()), plan)(proposal) == []


def test_the_clarify_task_may_only_read_inside_the_work_directory(tmp_path: Path) -> None:
    project = python_project(tmp_path / "p")
    plan = plan_task(ci_task(), project, responses={"team": "core"})
    task = clarify_task("configure-ci", task_inputs(ci_task()), plan)
    assert task.read_only and not task.allow_reads_outside and task.on_reject == "revert"
    assert '"team": "core"' in task.phases[0].instructions  # the answers so far, shown apart
