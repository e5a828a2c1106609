"""From a plan and the last answers to the values a run uses: :func:`resolve_inputs`.

The plan is checked first: planning again with the plan's own context, responses and
questions per turn must give the same ``plan_id``, or the task, its context or the work
directory changed since and :class:`~phasegate.errors.StalePlanError` says to plan again.
Then the plan's responses and the new ones are merged (new ones win), every answer is
checked by the same rules as in planning, and each input gets its value with where it came
from: ``response``, the inference source, or ``default``; an input whose ``ask_when`` does
not hold is ``not_applicable``, its text empty (:mod:`phasegate.phases.conditions`), and an
answer to it is refused. A required input that applies left without a value, or any
refused answer, raises :class:`~phasegate.errors.InputsInvalidError` with every problem.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phasegate.errors import InputProblem, InputsInvalidError, StalePlanError
from phasegate.phases.conditions import NOT_APPLICABLE_TEXT, applicability
from phasegate.phases.inputs import OTHER_LABEL
from phasegate.phases.model import Task
from phasegate.phases.pipeline import Pipeline
from phasegate.planning.answers import Value, other_id
from phasegate.planning.ask_user_question import normalize_responses
from phasegate.planning.clarification import missing_inputs, read_answers
from phasegate.planning.plan import API_VERSION, Plan
from phasegate.planning.reference import Responses, plan_task, response_turns

RESPONSE_SOURCE = "response"
"""The provenance of a value somebody answered."""
UNSET_SOURCE = "unset"
"""The provenance of an optional input nobody gave a value: its text is empty."""
NOT_APPLICABLE_SOURCE = "not_applicable"
"""The provenance of an input whose ``ask_when`` does not hold: its text is empty."""


@dataclass(frozen=True, slots=True)
class InputValues:
    """Every input's value, with where each came from."""

    values: Mapping[str, Value]
    sources: Mapping[str, str]

    def as_text(self) -> dict[str, str]:
        """The values as the text placeholders take (labels joined by ``", "``)."""
        return {
            key: ", ".join(value) if isinstance(value, tuple) else value
            for key, value in self.values.items()
        }

    @property
    def provenance(self) -> dict[str, str]:
        """Each input's source: ``response``, the inference rule and what it read,
        ``default``, ``unset``, or ``not_applicable`` (its ``ask_when`` does not hold)."""
        return dict(self.sources)

    @property
    def applied(self) -> tuple[str, ...]:
        """The ids of the inputs that applied (all but those whose ``ask_when`` did not
        hold), in declared order."""
        return tuple(key for key, source in self.sources.items()
                     if source != NOT_APPLICABLE_SOURCE)  # fmt: skip


def resolve_inputs(
    definition: Task | Pipeline,
    workdir: str | Path,
    plan: Plan,
    responses: Responses | None = None,
    *,
    environ: Mapping[str, str] | None = None,
) -> InputValues:
    """The values to run ``definition`` with: ``plan``'s inferred values and responses, then
    ``responses`` ({id: value} or AskUserQuestion's answer shape, or a list of such objects,
    one per turn, later ones winning) over them.

    Raises :class:`~phasegate.errors.StalePlanError` when ``plan`` no longer matches the
    definition, its context or the work directory, and
    :class:`~phasegate.errors.InputsInvalidError` when a required value is missing or an
    answer is refused. ``environ`` as for :func:`~phasegate.planning.reference.plan_task`.
    """
    again = plan_task(
        definition,
        workdir,
        context=plan.context,
        responses=plan.responses,
        questions_per_turn=plan.questions_per_turn,
        environ=environ,
        proposed=plan.proposed,
    )
    if plan.api_version != API_VERSION or again.plan_id != plan.plan_id:
        raise StalePlanError(
            f"the plan {plan.plan_id} no longer matches: {_what_changed(plan, again)} since it "
            f"was made (planning again gives {again.plan_id}); plan again with the same "
            "context and answer its questions"
        )
    inputs = definition.all_inputs
    new: dict[str, Any] = {}
    problems: list[InputProblem] = []
    for answered in response_turns(responses):
        more, shape_problems = normalize_responses(inputs, answered)
        new.update(more)
        problems += shape_problems
    known = {key: entry.value for key, entry in again.inferred.items()}
    answers = read_answers(inputs, {**plan.responses, **new}, known)
    problems += answers.problems
    values: dict[str, Value] = {}
    sources: dict[str, str] = {}
    for item in inputs:
        if item.id in answers.values:
            values[item.id], sources[item.id] = answers.values[item.id], RESPONSE_SOURCE
        elif item.id in again.inferred:
            entry = again.inferred[item.id]
            values[item.id], sources[item.id] = entry.value, entry.source
    decided = applicability(inputs, values)
    for item in inputs:
        if item.id not in decided.applies:  # not applicable, or waiting on a missing value
            values.pop(item.id, None)
            sources.pop(item.id, None)
    refused = {problem.field for problem in answers.problems}
    for item in missing_inputs(inputs, values):
        if item.id in refused or other_id(item) in refused:
            continue
        if item.id in answers.wants_other:
            problems.append(
                InputProblem(
                    other_id(item), None, f"is required when {OTHER_LABEL!r} is chosen", "type it"
                )
            )
        else:
            problems.append(
                InputProblem(item.id, None, "is required but has no value", "answer it")
            )
    if problems:
        raise InputsInvalidError(problems)
    for item in inputs:
        if item.id not in decided.applies:
            values[item.id], sources[item.id] = NOT_APPLICABLE_TEXT, NOT_APPLICABLE_SOURCE
        elif item.id not in values:
            values[item.id], sources[item.id] = "", UNSET_SOURCE
    order = [item.id for item in inputs]
    return InputValues({key: values[key] for key in order}, {key: sources[key] for key in order})


def _what_changed(plan: Plan, again: Plan) -> str:
    if plan.api_version != API_VERSION:
        return f"it is a version {plan.api_version} plan, and this is version {API_VERSION}"
    if plan.digests.definition != again.digests.definition:
        return "the task or pipeline changed"
    if plan.digests.workdir != again.digests.workdir:
        return "files, git facts or environment variables it read changed"
    return "the values it inferred or the answers it holds differ"
