"""The clarification rules: which missing inputs to ask, how many, and for how many turns.

These rules apply to every set of questions, whoever wrote them (the reference planner, or
a model's proposal, checked by :func:`check_proposal`):

- only inputs that are *missing* are asked (required, not inferred, not answered, no
  default), in declared order;
- only inputs that *apply* are asked or required: an input with ``ask_when`` waits until
  every input it names has a value (answered, inferred or defaulted), and does not apply
  when a value is not one its condition lists (:mod:`phasegate.phases.conditions`, the one
  rule); an answer to an input that does not apply is refused;
- at most :data:`MAX_QUESTIONS_PER_TURN` questions a turn (default 1), at most
  :data:`MAX_TURNS` turns;
- a refused answer is not stored: its input stays missing and is asked again.

**Turns.** The planner keeps no state: the turn is derived from the responses. Given as a
list of answer objects, one per turn answered (oldest first), the current turn is one more
than their number: exact, refused answers included. Given as one object, the rules are
replayed from no answers: turn 1 asks the first missing inputs; when the responses answer
every question of a turn, the next turn asks the inputs still missing after those answers,
and so on; the first turn whose questions are not all answered is the current one. A
response is used by the turn that asked it only, so a refused answer (TBD) spends its turn,
but one object cannot show an answer that was later replaced. Past turn 3 nothing more is
asked. Answers given ahead of their turn still fill their inputs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from phasegate.errors import InputProblem, UsageError
from phasegate.phases.conditions import Applicability, applicability
from phasegate.phases.inputs import MAX_HEADER, OTHER_LABEL, TaskInput
from phasegate.phases.placeholder_values import placeholder_problem
from phasegate.planning.answers import Value, check_answer, other_id, shown_value
from phasegate.planning.answers import wants_other as wants_follow_up
from phasegate.planning.questions import Question, follow_up_for, question_for

MAX_QUESTIONS_PER_TURN = 2
"""The most questions one turn may ask."""
DEFAULT_QUESTIONS_PER_TURN = 1
"""Questions a turn asks unless the caller says."""
MAX_TURNS = 3
"""The most turns of questions one plan may take."""


def questions_per_turn_checked(count: int) -> int:
    """``count`` when it is 1 or 2; else a :class:`UsageError`."""
    if not 1 <= count <= MAX_QUESTIONS_PER_TURN:
        raise UsageError(
            f"questions_per_turn must be 1 or {MAX_QUESTIONS_PER_TURN}, got {count}: a turn "
            "asks a person at most two questions",
            option="questions_per_turn",
        )
    return count


@dataclass(frozen=True, slots=True)
class Answers:
    """What responses say: the accepted values, the refused answers, and the single choices
    where "Other (specify)" was chosen without a usable value."""

    values: dict[str, Value] = field(default_factory=dict)
    problems: list[InputProblem] = field(default_factory=list)
    wants_other: frozenset[str] = frozenset()


def read_answers(
    inputs: Sequence[TaskInput],
    responses: Mapping[str, object],
    known: Mapping[str, Value] | None = None,
) -> Answers:
    """Every answer in ``responses`` ({id: value}) checked against its input; an answer to
    an input that does not apply, given ``known`` (inferred and default values) and the
    answers, is refused (:func:`inapplicable_answers`)."""
    values: dict[str, Value] = {}
    problems: list[InputProblem] = []
    wants_other: set[str] = set()
    for item in inputs:
        value, refused = check_answer(item, responses)
        if value is not None:
            values[item.id] = value
        problems.extend(refused)
        if wants_follow_up(item, responses) or (refused and refused[0].field == other_id(item)):
            wants_other.add(item.id)
    decided = applicability(inputs, {**(known or {}), **values})
    fields = {problem.field for problem in problems}
    problems.extend(p for p in inapplicable_answers(inputs, decided, responses)
                    if p.field not in fields)  # fmt: skip
    return Answers(
        {key: value for key, value in values.items() if key not in decided.not_applicable},
        problems,
        frozenset(wants_other - decided.not_applicable),
    )


def inapplicable_answers(
    inputs: Sequence[TaskInput], decided: Applicability, responses: Mapping[str, object]
) -> list[InputProblem]:
    """One problem per answer (``responses``, {id: value}) to an input that does not apply:
    such answers are refused, never stored or used."""
    problems: list[InputProblem] = []
    for item in inputs:
        if item.id not in decided.not_applicable:
            continue
        for key in (item.id, other_id(item)):
            if key in responses:
                problems.append(
                    InputProblem(key, shown_value(responses[key]),
                                 "does not apply: " + decided.reason(item),
                                 "leave this answer out, or change the answer it depends on")
                )  # fmt: skip
    return problems


def missing_inputs(inputs: Sequence[TaskInput], values: Mapping[str, Value]) -> list[TaskInput]:
    """The required inputs that apply and have no value (``values`` holds inferred, answered
    and default values), in declared order. An input waiting for an input it names is not
    missing yet: that input is."""
    applies = applicability(inputs, values).applies
    return [
        item for item in inputs if item.required and item.id in applies and item.id not in values
    ]


def progress_counts(
    inputs: Sequence[TaskInput], known: Mapping[str, Value], values: Mapping[str, Value]
) -> tuple[int, int]:
    """How many required inputs that apply (given ``values``) had no value from ``known``
    (inferred and defaults), and how many of them still have none."""
    applies = applicability(inputs, values).applies
    to_ask = [item.id for item in inputs
              if item.required and item.id in applies and item.id not in known]  # fmt: skip
    return len(to_ask), sum(1 for ident in to_ask if ident not in values)


def pending_questions(
    inputs: Sequence[TaskInput], values: Mapping[str, Value], wants_other: frozenset[str]
) -> list[Question]:
    """One question per missing input, in declared order: its follow-up when "Other
    (specify)" was chosen without a value, else its own question."""
    return [
        follow_up_for(item) if item.id in wants_other else question_for(item)
        for item in missing_inputs(inputs, values)
    ]


@dataclass(frozen=True, slots=True)
class Turn:
    """Where the conversation stands: the turn ``number`` and its ``questions``, or with no
    questions the turns the responses answered; ``spent`` when turns ran out first."""

    number: int
    questions: tuple[Question, ...]
    spent: bool = False


def current_turn(
    inputs: Sequence[TaskInput],
    known: Mapping[str, Value],
    responses: Mapping[str, object],
    per_turn: int,
) -> Turn:
    """The turn these ``responses`` ({id: value}) lead to, by replaying the rules (module
    docstring); ``known`` holds the inferred and default values."""
    everything = read_answers(inputs, responses, known)
    final = {**known, **everything.values}
    if not missing_inputs(inputs, final):
        return Turn(_turns_answered(inputs, known, responses, per_turn), ())
    used: dict[str, object] = {}
    for number in range(1, MAX_TURNS + 1):
        so_far = read_answers(inputs, used, known)
        asked = pending_questions(inputs, {**known, **so_far.values}, so_far.wants_other)
        asked = asked[:per_turn]
        if not all(q.id in responses and q.id not in used for q in asked):
            still = [q for q in asked if q.input not in everything.values]
            if still:
                return Turn(number, tuple(still))
            # Everything this turn asked was answered ahead of time: ask what is left.
            rest = pending_questions(inputs, final, everything.wants_other)
            return Turn(number, tuple(rest[:per_turn]))
        used.update({q.id: responses[q.id] for q in asked})
    return Turn(MAX_TURNS, (), spent=True)


def turn_after(
    inputs: Sequence[TaskInput],
    values: Mapping[str, Value],
    wants_other: frozenset[str],
    answered_turns: int,
    per_turn: int,
) -> Turn:
    """The turn after ``answered_turns`` turns of answers (responses given as a list):
    ``values`` and ``wants_other`` are the state after all of them."""
    pending = pending_questions(inputs, values, wants_other)
    if not pending:
        return Turn(min(answered_turns, MAX_TURNS), ())
    if answered_turns >= MAX_TURNS:
        return Turn(MAX_TURNS, (), spent=True)
    return Turn(answered_turns + 1, tuple(pending[:per_turn]))


def _turns_answered(
    inputs: Sequence[TaskInput],
    known: Mapping[str, Value],
    responses: Mapping[str, object],
    per_turn: int,
) -> int:
    """How many turns the replay needs before nothing is missing (0 when nothing was)."""
    used: dict[str, object] = {}
    for number in range(MAX_TURNS + 1):
        so_far = read_answers(inputs, used, known)
        asked = pending_questions(inputs, {**known, **so_far.values}, so_far.wants_other)
        asked = [q for q in asked[:per_turn] if q.id in responses and q.id not in used]
        if not asked:
            return number
        used.update({q.id: responses[q.id] for q in asked})
    return MAX_TURNS


def check_proposal(
    inputs: Sequence[TaskInput],
    proposal: object,
    *,
    questions_per_turn: int = DEFAULT_QUESTIONS_PER_TURN,
    responses: Mapping[str, object] | None = None,
) -> list[str]:
    """The problems of a proposal someone else wrote, as feedback sentences (none: it
    follows the rules).

    ``proposal`` is ``{"inferred": {id: {"value": ..., "source": "..."}}, "questions":
    [{"id": ..., ...}]}``: inferred values must be valid answers with a source; the questions
    must be the first missing inputs (required, not inferred, not answered in
    ``responses`` ({id: value}), no default, applying by their ``ask_when``) in declared
    order, at most ``questions_per_turn`` of them, with the declared text, header and
    options (``Other (specify)`` last on a single choice) and no placeholder default. A
    single choice answered "Other (specify)" without its text is asked as ``<id>__other``.
    Nothing may be inferred for an input that does not apply.
    """
    if not isinstance(proposal, Mapping):
        return ['Answer with one JSON object: {"inferred": {...}, "questions": [...]}.']
    problems = [
        f"Remove the key {key!r}: a proposal has only inferred and questions."
        for key in proposal
        if key not in ("inferred", "questions")
    ]
    by_id = {item.id: item for item in inputs}
    inferred = _check_inferred(by_id, proposal.get("inferred", {}), problems)
    answered = read_answers(inputs, responses or {}, {**_defaults(inputs), **inferred})
    known = {**_defaults(inputs), **inferred, **answered.values}
    decided = applicability(inputs, known)
    for key in inferred:
        if key in decided.not_applicable:
            problems.append(
                f"Do not infer {key!r}: it does not apply ({decided.reason(by_id[key])})."
            )
    expected = [q.id for q in pending_questions(inputs, known, answered.wants_other)]
    follow_ups = {other_id(item): item for item in inputs if item.type == "choice"}
    limit = questions_per_turn_checked(questions_per_turn)
    questions = proposal.get("questions", [])
    if not isinstance(questions, list):
        problems.append("Give questions as a list (empty when nothing is missing).")
        return problems
    asked: list[str] = []
    for position, question in enumerate(questions):
        ident = question.get("id") if isinstance(question, Mapping) else None
        if isinstance(ident, str) and ident in follow_ups:
            asked.append(ident)
            continue
        if not isinstance(ident, str) or ident not in by_id:
            known_ids = ", ".join(by_id) or "none"
            problems.append(
                f"Question {position + 1} must have the id of an input (one of: {known_ids})."
            )
            continue
        asked.append(ident)
        if ident in decided.not_applicable:
            problems.append(
                f"Do not ask {ident!r}: it does not apply ({decided.reason(by_id[ident])})."
            )
        elif ident in decided.waiting:
            problems.append(
                f"Do not ask {ident!r} yet: {decided.reason(by_id[ident])}, and that is not "
                "known yet; ask what it depends on first."
            )
        problems.extend(_check_question(by_id[ident], question, inferred))
    if len(questions) > limit:
        problems.append(
            f"Ask at most {limit} question(s) this turn, not {len(questions)}; the others "
            "wait for a later turn."
        )
    wanted = expected[:limit]
    if asked[:limit] != wanted:
        want = ", ".join(wanted) if wanted else "no question (nothing is missing)"
        problems.append(
            f"Ask only missing inputs, first ones first, in declared order: {want}; you "
            f"asked {', '.join(asked) or 'nothing'}."
        )
    return problems


def _defaults(inputs: Sequence[TaskInput]) -> dict[str, Value]:
    return {item.id: item.default for item in inputs if item.default is not None}


def _check_inferred(
    by_id: Mapping[str, TaskInput], inferred: object, problems: list[str]
) -> dict[str, Value]:
    if not isinstance(inferred, Mapping):
        problems.append(
            'Give inferred as an object: {"<input id>": {"value": ..., "source": ...}}.'
        )
        return {}
    values: dict[str, Value] = {}
    for ident, entry in inferred.items():
        item = by_id.get(str(ident))
        if item is None:
            problems.append(f"{ident!r} is not an input; infer only: {', '.join(by_id)}.")
            continue
        if not isinstance(entry, Mapping) or not str(entry.get("source") or "").strip():
            problems.append(
                f'Inferred {ident!r} needs its source: {{"value": ..., "source": "the '
                'file or fact it came from"}.'
            )
            continue
        value, refused = check_answer(item, {item.id: entry.get("value")})
        if value is None:
            reason = refused[0] if refused else None
            why = f"{reason.problem}; {reason.requirement}" if reason else "has no value"
            problems.append(f"Inferred {ident!r} {why}. Infer only what the project shows.")
            continue
        values[item.id] = value
    return values


def _check_question(item: TaskInput, question: Mapping[str, object], inferred: object) -> list[str]:
    problems: list[str] = []
    expected = question_for(item)
    if isinstance(inferred, Mapping) and item.id in inferred:
        problems.append(f"Do not ask {item.id!r}: you inferred it.")
    if "question" in question and question["question"] != item.question:
        problems.append(f"Ask {item.id!r} with its declared text: {item.question!r}.")
    header = question.get("header")
    if header is not None and (not isinstance(header, str) or len(header) > MAX_HEADER):
        problems.append(f"The header of {item.id!r} has at most {MAX_HEADER} characters.")
    if "options" in question:
        labels = [o.label for o in expected.options]
        given = question["options"]
        got = (
            [o.get("label") if isinstance(o, Mapping) else o for o in given]
            if isinstance(given, list)
            else None
        )
        if got != labels:
            shown = ", ".join(repr(label) for label in labels)
            rule = f" ({OTHER_LABEL!r} last)" if item.type == "choice" else ""
            problems.append(f"Offer {item.id!r} exactly these options{rule}: {shown}.")
    default = question.get("default")
    if default is not None and (
        not isinstance(default, str) or placeholder_problem(default) is not None
    ):
        problems.append(
            f"The default of {item.id!r} must be a concrete value, not {default!r}; leave it "
            "out when you do not know one."
        )
    return problems
