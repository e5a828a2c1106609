"""Which characters of a prompt phasegate wrote, and which are the definition's own words.

A prompt wraps the task's (or pipeline's) own words (its description, each phase's
instructions, the output schema, the names) in the gate's scaffolding: the phase headings,
the marker rules, how to answer. Feedback, resume and revision prompts are the gate's own,
except for whatever of the definition they quote. What the gate adds to a run's input is
counted from these characters (:mod:`phasegate.evidence.overhead`).
"""

from __future__ import annotations

from collections.abc import Iterable

from phasegate.phases.model import Task
from phasegate.phases.pipeline import Pipeline
from phasegate.prompts.phased import schema_text


def gate_characters(text: str, own_words: Iterable[str]) -> int:
    """How many characters of ``text`` the gate wrote: all of it but each of ``own_words``
    found in it, taken out once, longest first (so a name inside an instruction is not
    taken out twice)."""
    rest = text
    for words in sorted({w.strip() for w in own_words if w.strip()}, key=len, reverse=True):
        rest = rest.replace(words, "", 1)
    return len(rest)


def task_words(task: Task) -> tuple[str, ...]:
    """The words of ``task`` its prompts embed as they are."""
    words = [task.name, task.description or ""]
    for phase in task.phases:
        words += [phase.name, phase.name.upper(), phase.instructions]
        if phase.is_output:
            words.append(schema_text(phase))
    return tuple(words)


def pipeline_words(pipeline: Pipeline) -> tuple[str, ...]:
    """The words of ``pipeline`` (its stages' prompts and tasks) its prompts embed."""
    words = [pipeline.name, pipeline.description or ""]
    for stage in pipeline.stages:
        words += [stage.name, stage.prompt or ""]
        if stage.task is not None:
            words += task_words(stage.task)
    return tuple(words)
