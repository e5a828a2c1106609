"""Definitions with their input values filled in (phasegate.phases.filled)."""

from __future__ import annotations

import pytest

from phasegate.errors import InputsInvalidError
from phasegate.phases.filled import pipeline_with_values, task_with_values
from phasegate.phases.loading import task_from_mapping
from phasegate.phases.pipeline import pipeline_from_mapping

TEMPLATE = "Write templates/page.html showing {{ title }} above {{ body }}."
LANGUAGE = {"id": "language", "question": "Which language?", "header": "Language"}


def test_a_task_without_inputs_runs_with_its_placeholders_as_written() -> None:
    """No inputs declared: {{ title }} is text the agent should see, not a value to fill."""
    task = task_from_mapping({"name": "t", "phases": [{"name": "w", "instructions": TEMPLATE}]})
    assert task_with_values(task, None).phases[0].instructions == TEMPLATE


def test_a_task_without_inputs_still_refuses_values_it_does_not_declare() -> None:
    """A value for an undeclared id is a mistake to report, never a substitution."""
    task = task_from_mapping({"name": "t", "phases": [{"name": "w", "instructions": TEMPLATE}]})
    with pytest.raises(InputsInvalidError):
        task_with_values(task, {"title": "Home"})


def test_a_pipeline_without_inputs_keeps_its_stage_prompts_and_tasks_as_written() -> None:
    """Neither the pipeline nor its stage task declares inputs: both texts stay literal."""
    pipeline = pipeline_from_mapping(
        {
            "name": "p",
            "stages": [
                {"name": "a", "prompt": TEMPLATE, "exit_when": [{"file_exists": "x"}]},
                {
                    "name": "b",
                    "task": {"name": "t", "phases": [{"name": "w", "instructions": TEMPLATE}]},
                },
            ],
        }
    )
    filled = pipeline_with_values(pipeline, None)
    assert filled.stages[0].prompt == TEMPLATE
    assert filled.stages[1].task is not None
    assert filled.stages[1].task.phases[0].instructions == TEMPLATE


def test_a_pipeline_with_inputs_fills_its_stage_prompts() -> None:
    """Declared inputs are checked and filled as before."""
    pipeline = pipeline_from_mapping(
        {
            "name": "p",
            "inputs": [LANGUAGE],
            "stages": [
                {"name": "a", "prompt": "Use {{ language }}.", "exit_when": [{"file_exists": "x"}]}
            ],
        }
    )
    assert pipeline_with_values(pipeline, {"language": "Go"}).stages[0].prompt == "Use Go."
