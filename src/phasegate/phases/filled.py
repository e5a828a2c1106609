"""A task or pipeline with its input values filled in, ready to become prompts.

Every phase's instructions (a pipeline's stage prompts and stage tasks' instructions too)
get their ``{{ id }}`` replaced by the values, as text, in one pass
(:func:`~phasegate.phases.placeholders.substitute`). Values come from
:func:`~phasegate.phases.placeholders.text_values`: given ones, then defaults; a required
input without either raises before anything runs. A definition that declares no inputs is
never filled in: its ``{{ ... }}`` are literal text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from phasegate.phases.model import Task
from phasegate.phases.placeholders import substitute, text_values

if TYPE_CHECKING:  # a task's run needs no pipeline module
    from phasegate.phases.pipeline import Pipeline, Stage


def task_with_values(task: Task, given: Mapping[str, str] | None) -> Task:
    """``task`` with every phase's instructions filled in from ``given`` and the defaults.

    A task without inputs comes back as it is, ``{{ ... }}`` included. Raises
    :class:`~phasegate.errors.InputsInvalidError` (before anything runs) for a required
    input without a value, a placeholder value (TBD) or an id the task does not declare.
    """
    values = text_values(task.inputs, given)  # refuses values for undeclared ids, too
    return _filled_task(task, values) if task.inputs else task


def pipeline_with_values(pipeline: Pipeline, given: Mapping[str, str] | None) -> Pipeline:
    """``pipeline`` with its stage prompts and stage tasks filled in; as for
    :func:`task_with_values`, over the pipeline's inputs and its stage tasks'."""
    inputs = pipeline.all_inputs
    values = text_values(inputs, given)
    if not inputs:
        return pipeline
    stages = tuple(_filled_stage(stage, values) for stage in pipeline.stages)
    return pipeline.model_copy(update={"stages": stages})


def _filled_stage(stage: Stage, values: Mapping[str, str]) -> Stage:
    prompt = substitute(stage.prompt, values) if stage.prompt is not None else None
    task = _filled_task(stage.task, values) if stage.task is not None else None
    return stage.model_copy(update={"prompt": prompt, "task": task})


def _filled_task(task: Task, values: Mapping[str, str]) -> Task:
    phases = tuple(
        phase.model_copy(update={"instructions": substitute(phase.instructions, values)})
        for phase in task.phases
    )
    return task.model_copy(update={"phases": phases})
