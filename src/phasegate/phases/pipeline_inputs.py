"""A pipeline's inputs: those it declares, those its stage tasks declare, and the placeholders
its stage prompts and stage tasks' instructions use.

A pipeline *declares inputs* when it or one of its stage tasks does. Only then are its
``{{ id }}`` placeholders checked (each must name an input, each input must be used) and,
at run time, filled in; a pipeline that declares none keeps every ``{{ ... }}`` as literal
text, as pagent prompt files and Ralph prompts need.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from phasegate._files import LocatedValueError
from phasegate.phases.inputs import TaskInput
from phasegate.phases.model import Task
from phasegate.phases.placeholders import Location, check_placeholders, refuse_repeated_ids


class StageTexts(Protocol):
    """What of a stage may hold placeholders: its prompt and its phased task."""

    @property
    def prompt(self) -> str | None:
        """The stage's instructions, if any."""

    @property
    def task(self) -> Task | None:
        """The stage's phased task, if any."""


def all_inputs(inputs: Sequence[TaskInput], stages: Sequence[StageTexts]) -> tuple[TaskInput, ...]:
    """The pipeline's ``inputs``, then those its stage tasks declare (each id once)."""
    found = {item.id: item for item in inputs}
    for stage in stages:
        for item in stage.task.inputs if stage.task is not None else ():
            found.setdefault(item.id, item)
    return tuple(found.values())


def check_pipeline_inputs(inputs: Sequence[TaskInput], stages: Sequence[StageTexts]) -> None:
    """Refuse repeated inputs, a stage task declaring an input unlike the pipeline or an
    earlier stage task, and (when any input is declared) a placeholder naming no input or an
    input no text uses. Raises :class:`~phasegate._files.models.LocatedValueError` pointing
    at the field."""
    refuse_repeated_ids(inputs)
    own = {item.id: item for item in inputs}
    texts: list[tuple[Location, str]] = []
    for index, stage in enumerate(stages):
        texts.append((("stages", index, "prompt"), stage.prompt or ""))
        if stage.task is None:
            continue
        for phase_index, phase in enumerate(stage.task.phases):
            where = ("stages", index, "task", "phases", phase_index, "instructions")
            texts.append((where, phase.instructions))
        for item in stage.task.inputs:
            if own.setdefault(item.id, item) != item:
                raise LocatedValueError(
                    f"the task declares input {item.id!r} unlike the pipeline or an earlier "
                    "stage's task; declare it the same way everywhere, or rename one",
                    location=("stages", index, "task", "inputs"),
                )
    if own:  # without inputs, {{ ... }} is literal text: nothing to check
        check_placeholders(inputs, texts, where="stage prompts or stage tasks", also_known=own)
