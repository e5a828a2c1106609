"""The reference planner: :func:`plan_task`, deterministic, read-only, no model.

It infers what the rules can from the work directory, the environment variables the task
names and the context, reads the responses so far, and asks what is still missing by the
clarification rules (:mod:`phasegate.planning.clarification`). No clock, no randomness, no
writing, no network, no programs run: the same call on the same files gives the same plan,
byte for byte. It is the fallback when no model is available, and the behaviour a model's
plan is checked against.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from phasegate._files.digests import json_digest
from phasegate.errors import InputProblem, UsageError
from phasegate.phases.conditions import applicability
from phasegate.phases.inputs import TaskInput
from phasegate.phases.model import Task
from phasegate.phases.pipeline import Pipeline
from phasegate.planning.answers import Value, fit
from phasegate.planning.ask_user_question import next_ask_user_question, normalize_responses
from phasegate.planning.clarification import (
    DEFAULT_QUESTIONS_PER_TURN,
    MAX_TURNS,
    current_turn,
    missing_inputs,
    progress_counts,
    questions_per_turn_checked,
    read_answers,
    turn_after,
)
from phasegate.planning.facts import WorkdirFacts
from phasegate.planning.inference import Inferred, infer_values
from phasegate.planning.plan import (
    API_VERSION,
    InferredValue,
    Plan,
    PlanDigests,
    PlanStatus,
    PlanValidation,
    progress,
)

Responses = Mapping[str, Any] | Sequence[Mapping[str, Any]]
"""Answers: one object (``{id: value}``, the AskUserQuestion shape, or both), or a list of
them, one per turn answered."""


def plan_task(
    definition: Task | Pipeline,
    workdir: str | Path,
    *,
    context: Mapping[str, Any] | None = None,
    responses: Responses | None = None,
    questions_per_turn: int = DEFAULT_QUESTIONS_PER_TURN,
    environ: Mapping[str, str] | None = None,
    proposed: Mapping[str, InferredValue] | None = None,
) -> Plan:
    """Plan ``definition`` (a task or a pipeline) for ``workdir``.

    ``context``: a JSON object the ``context`` rules read. ``responses``: the answers so far,
    as ``{id: value}`` or as AskUserQuestion's ``{"answers": {question: label}}`` (or both in
    one object), or a list of such objects, one per turn answered, oldest first (later
    answers win); how the turn is derived from them is in
    :mod:`~phasegate.planning.clarification`.
    ``questions_per_turn``: 1 (default) or 2. ``environ``: the variables ``env`` rules read
    (default: this process's environment). ``proposed``: values someone else inferred (the
    agent planner), each with its source; they count where no rule found a value, before a
    default, when they are valid answers, and the plan keeps them so planning again gives the
    same plan. Raises :class:`~phasegate.errors.UsageError` for
    a work directory that is not one, and for a context, responses or count that cannot be
    used; problems with the answers themselves are in the plan's ``validation``.
    """
    per_turn = questions_per_turn_checked(questions_per_turn)
    context_data = json_object(context, "context")
    turns = response_turns(responses)
    root = Path(workdir)
    if not root.is_dir():
        raise UsageError(f"the work directory {root} is not a directory", option="workdir")
    inputs = definition.all_inputs
    facts = WorkdirFacts(root, environ)
    found = infer_values(inputs, facts, context_data)
    kept_proposals = _proposals(inputs, found, proposed or {})
    found |= {key: Inferred(entry.value, entry.source) for key, entry in kept_proposals.items()}
    inferred = {
        item.id: InferredValue(value=found[item.id].value, source=found[item.id].source)
        if item.id in found
        else InferredValue(value=item.default, source="default")
        for item in inputs
        if item.id in found or item.default is not None
    }
    known: dict[str, Value] = {key: entry.value for key, entry in inferred.items()}
    normalized: dict[str, Any] = {}
    shape_problems: list[InputProblem] = []
    for answered in turns or [{}]:
        more, problems = normalize_responses(inputs, answered)
        normalized.update(more)
        shape_problems += problems
    answers = read_answers(inputs, normalized, known)
    refused = {problem.field for problem in answers.problems}
    kept = {key: value for key, value in normalized.items() if key not in refused}
    values = {**known, **answers.values}
    missing = missing_inputs(inputs, values)
    if isinstance(responses, Sequence):
        turn = turn_after(inputs, values, answers.wants_other, len(turns), per_turn)
    else:
        turn = current_turn(inputs, known, normalized, per_turn)
    # What the rules found for an input that does not apply stays in inferred: a later
    # answer may make it apply, and execute resolves the values from this plan again.
    decided = applicability(inputs, values)
    errors = [*shape_problems, *answers.problems]
    if turn.spent:
        errors += [
            InputProblem(
                item.id,
                None,
                f"is still missing after {MAX_TURNS} turns of questions",
                "give its value with the responses",
            )
            for item in missing
        ]
    questions = turn.questions if missing else ()
    digests = PlanDigests(definition=definition.digest(), workdir=facts.digest())
    identity = {
        "api_version": API_VERSION,
        "context": context_data,
        "digests": digests.model_dump(mode="json"),
        "inferred": {key: entry.model_dump(mode="json") for key, entry in inferred.items()},
        "questions_per_turn": per_turn,
        "responses": kept,
    }
    return Plan(
        plan_id=_digest(identity),
        status=_status(missing, errors, questions),
        task=definition.name,
        kind=definition.kind,
        turn=turn.number,
        max_turns=MAX_TURNS,
        questions_per_turn=per_turn,
        questions=questions,
        ask_user_question=next_ask_user_question(questions, turns[-1] if turns else None)
        if questions
        else None,
        inferred=inferred,
        missing_info=tuple(item.id for item in missing),
        progress=progress(*progress_counts(inputs, known, values)),
        not_applicable=tuple(item.id for item in inputs if item.id in decided.not_applicable),
        validation=PlanValidation(valid=not errors, errors=tuple(errors)),
        context=context_data,
        responses=kept,
        digests=digests,
        proposed=kept_proposals,
    )


def _proposals(
    inputs: Sequence[TaskInput],
    found: Mapping[str, Inferred],
    proposed: Mapping[str, InferredValue],
) -> dict[str, InferredValue]:
    """The proposed values that count: for inputs no rule inferred, valid as answers."""
    kept: dict[str, InferredValue] = {}
    for item in inputs:
        entry = proposed.get(item.id)
        if item.id in found or entry is None:
            continue
        raw = list(entry.value) if isinstance(entry.value, tuple) else entry.value
        value = fit(item, raw)
        if value is not None:
            kept[item.id] = InferredValue(value=value, source=entry.source)
    return kept


def response_turns(
    responses: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None,
) -> list[dict[str, Any]]:
    """The answers as a list of objects: one per turn answered, or the one object given."""
    if responses is None:
        return []
    if isinstance(responses, Mapping):
        return [json_object(responses, "responses")]
    if isinstance(responses, str | bytes) or not isinstance(responses, Sequence):
        raise UsageError(
            "responses must be a JSON object, or a list of them (one per turn answered)",
            option="responses",
        )
    return [json_object(answered, "responses") for answered in responses]


def json_object(value: Mapping[str, Any] | None, option: str) -> dict[str, Any]:
    """``value`` as a plain JSON object; a :class:`UsageError` naming ``option`` when it is
    not a mapping of JSON values."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise UsageError(
            f"{option} must be a JSON object, not {type(value).__name__}", option=option
        )
    try:
        data = json.loads(json.dumps(dict(value), allow_nan=False))
    except (TypeError, ValueError, RecursionError) as exc:
        raise UsageError(f"{option} must hold only JSON values: {exc}", option=option) from None
    if not isinstance(data, dict):  # pragma: no cover - a mapping always dumps as an object
        raise UsageError(f"{option} must be a JSON object", option=option)
    return data


def _status(
    missing: list[TaskInput], errors: list[InputProblem], questions: tuple[object, ...]
) -> PlanStatus:
    if not missing and not errors:
        return "ready"
    return "needs_answers" if questions else "invalid"


def _digest(data: object) -> str:
    return json_digest(data)[:32]
