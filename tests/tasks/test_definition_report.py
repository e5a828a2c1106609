"""Both reports answer the same questions (sdk.tasks.report.DefinitionReport): readers such as
the GitHub view and the execute lines never ask which kind ran."""

from __future__ import annotations

from phasegate.modes import STEP_NOUN
from phasegate.tasks.report import DefinitionReport
from tests.helpers.github_reports import hostile_pipeline_report, hostile_run_report


def test_a_task_report_and_a_pipeline_report_name_their_kind_name_and_steps() -> None:
    """kind, name and steps are the task's or pipeline's own fields, whichever ran."""
    task, pipeline = hostile_run_report("plain"), hostile_pipeline_report("plain")
    reports: list[tuple[DefinitionReport, str, str, list[str]]] = [
        (task, "task", task.task, [phase.name for phase in task.phases]),
        (pipeline, "pipeline", pipeline.pipeline, [stage.name for stage in pipeline.stages]),
    ]
    for report, kind, name, steps in reports:
        assert (report.kind, report.name) == (kind, name)
        assert [step.name for step in report.steps] == steps
        assert [step.index for step in report.steps] == list(range(1, len(steps) + 1))
        assert report.exit_code == {"accepted": 0, "rejected": 1}.get(report.verdict, 3)
    assert STEP_NOUN == {"task": "phase", "pipeline": "stage"}


def test_the_shared_questions_are_not_part_of_the_reports_json() -> None:
    """kind, name and steps are read from fields the JSON already has: the contract of
    --json stays as it was."""
    for report in (hostile_run_report("plain"), hostile_pipeline_report("plain")):
        assert not {"kind", "name", "steps"} & set(report.model_dump(mode="json"))
