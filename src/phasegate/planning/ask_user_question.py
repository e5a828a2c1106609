"""Claude Code's ``AskUserQuestion`` tool, both ways, and reading responses in either shape.

Questions become the tool's input: ``{"questions": [{"question", "header", "options":
[{"label", "description"}], "multiSelect"}]}``. The tool answers ``{"answers": {question
text: label}}`` (several labels joined by commas; a person's own text where they typed one).
:func:`normalize_responses` takes that shape or plain ``{id: value}`` and gives ``{id:
value}``: a person's own text on a single choice is their value, their own text on a
free-text question is the answer; answers to questions the task does not ask are problems.

**More options than the tool shows.** The tool shows at most :data:`TOOL_OPTIONS` options a
question; a choice may list up to :data:`~phasegate.phases.inputs.MAX_OPTIONS`. Such a
question is relayed in two steps, and loses no option:

1. :func:`to_ask_user_question` asks it with its options in groups: each group is one option
   whose label joins the group's labels with `` / `` (``Frontend / Backend / Database``), and
   a single choice keeps ``Other (specify)`` as its own last option, shown on the first step
   like any group (2 or 3 groups of 2 to 4 options, as even as they go: 12 options are 3
   groups of 4). A multi_choice's first step is multi-select: any number of groups.
2. :func:`relay_follow_ups` gives, for each group chosen, the follow-up question
   ``"<question> (<group label>)"`` with the group's options (multi-select as the original),
   at most 4 questions a tool call; a plan made with the first step's answer gives them as
   its ``ask_user_question`` (:func:`next_ask_user_question`).

:func:`relayed_answers` (and :func:`normalize_responses`, which applies it) maps both steps'
answers back to the original question text with the original labels: a single choice's
option from any group, ``Other (specify)`` or typed text as chosen on either step; a
multi_choice's options from every group chosen, in declared order. A group's label given
without its follow-up's answer is a problem, never a value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from phasegate.errors import InputProblem
from phasegate.phases.inputs import OTHER_LABEL, TaskInput
from phasegate.planning.answers import other_id, shown_value
from phasegate.planning.questions import Question, QuestionOption, follow_up_text, question_for

TOOL_OPTIONS = 4
"""The most options ``AskUserQuestion`` shows a question (it adds its own "Other")."""
TOOL_QUESTIONS = 4
"""The most questions one ``AskUserQuestion`` call asks."""
GROUP_SEPARATOR = " / "
"""Joins a group's labels into the label of the group's option on the first step."""
_TOOL_KEYS = frozenset({"answers", "questions", "annotations"})


def to_ask_user_question(questions: Sequence[Question]) -> dict[str, Any]:
    """The ``AskUserQuestion`` input that asks ``questions`` (1 to 4 of them); a question
    with more options than the tool shows is asked with its options in groups (step 1 of
    the relay, module docstring)."""
    return {"questions": [_tool_question(question) for question in questions]}


def option_groups(question: Question) -> tuple[tuple[QuestionOption, ...], ...]:
    """The groups ``question``'s options are relayed in, in declared order, ``Other
    (specify)`` left out: none when the tool shows them all at once."""
    if len(question.options) <= TOOL_OPTIONS:
        return ()
    listed = _listed(question)
    count = max(2, math.ceil(len(listed) / TOOL_OPTIONS))
    size, extra = divmod(len(listed), count)
    groups: list[tuple[QuestionOption, ...]] = []
    start = 0
    for index in range(count):
        end = start + size + (1 if index < extra else 0)
        groups.append(listed[start:end])
        start = end
    return tuple(groups)


def group_label(group: Sequence[QuestionOption]) -> str:
    """The label of ``group``'s option on the first step."""
    return GROUP_SEPARATOR.join(option.label for option in group)


def group_question_text(question: Question, group: Sequence[QuestionOption]) -> str:
    """The text of the follow-up question that asks among ``group``'s options."""
    return f"{question.question} ({group_label(group)})"


def relay_follow_ups(
    questions: Sequence[Question], answer: Mapping[str, object]
) -> list[dict[str, Any]]:
    """The ``AskUserQuestion`` inputs that ask, for each group chosen in ``answer`` (the
    tool's answer to :func:`to_ask_user_question`), its options (step 2 of the relay): at
    most 4 questions each; none when no group was chosen."""
    answers = answer.get("answers")
    chosen = answers if isinstance(answers, Mapping) else {}
    asked: list[dict[str, Any]] = []
    for question in questions:
        by_label = {group_label(group): group for group in option_groups(question)}
        for part in _parts(question, chosen.get(question.question)):
            group = by_label.get(part)
            if group is not None:
                asked.append(_tool_entry(question, group_question_text(question, group), group))
    return [
        {"questions": asked[start : start + TOOL_QUESTIONS]}
        for start in range(0, len(asked), TOOL_QUESTIONS)
    ]


def next_ask_user_question(
    questions: Sequence[Question], latest: Mapping[str, object] | None
) -> dict[str, Any]:
    """What to ask the tool next for ``questions``: the follow-ups of the groups ``latest``
    (the newest response object) chose without answering them yet (step 2; the first
    call's worth), else ``questions`` themselves (step 1)."""
    if latest and is_tool_answer(latest):
        pending = relayed_answers(questions, latest)
        follow_ups = relay_follow_ups(questions, pending)
        if follow_ups:
            return follow_ups[0]
    return to_ask_user_question(questions)


def relayed_answers(
    questions: Sequence[Question], *answers: Mapping[str, object]
) -> dict[str, Any]:
    """The tool's ``answers`` (of both steps of the relay, in any number of objects) keyed by
    the original question texts, with the original labels: ``{"answers": {question text:
    label(s)}}``. A group chosen whose follow-up has no answer yet stays as its group label
    (:func:`normalize_responses` refuses it); answers to other questions are kept as given."""
    merged: dict[str, object] = {}
    for one in answers:
        given = one.get("answers")
        merged.update(given if isinstance(given, Mapping) else {})
    for question in questions:
        groups = option_groups(question)
        if not groups or question.question not in merged:
            continue
        by_label = {group_label(group): group for group in groups}
        parts = _parts(question, merged[question.question])
        if not parts:
            continue
        picked: list[str] = []
        for part in parts:
            group = by_label.get(part)
            text = group_question_text(question, group) if group is not None else None
            if text is not None and text in merged:
                picked.extend(_parts(question, merged.pop(text)))
            else:
                picked.append(part)
        merged[question.question] = _joined(question, picked)
    return {"answers": merged}


def is_tool_answer(raw: Mapping[str, object]) -> bool:
    """Whether ``raw`` holds the tool's answer shape (``answers`` keyed by question text)."""
    return isinstance(raw.get("answers"), Mapping)


def responses_from_ask_user_question(
    inputs: Sequence[TaskInput], answer: Mapping[str, object]
) -> tuple[dict[str, object], list[InputProblem]]:
    """``{id: value}`` from the tool's ``{"answers": {question text: label}}``, with the
    answers that match no question of the task as problems."""
    by_text: dict[str, str] = {}
    for item in inputs:
        by_text[item.question] = item.id
        if item.type == "choice":
            by_text[follow_up_text(item)] = other_id(item)
    questions = {item.id: question_for(item) for item in inputs}
    for ident, question in questions.items():
        # A follow-up's answer alone (the group chosen in an earlier object) is the answer.
        for group in option_groups(question):
            by_text.setdefault(group_question_text(question, group), ident)
    answers = relayed_answers(list(questions.values()), answer)["answers"]
    responses: dict[str, object] = {}
    problems: list[InputProblem] = []
    for text, value in answers.items():
        key = by_text.get(str(text))
        if key in questions and _group_chosen(questions[key], value):
            # Step 1 of the relay, its follow-up not answered yet: not an answer, and not a
            # refused one; the plan asks the follow-up next (next_ask_user_question).
            continue
        if key is None:
            problems.append(
                InputProblem(
                    str(text)[:200],
                    shown_value(value),
                    "answers no question of this task",
                    "answer the questions of the plan, with their text unchanged",
                )
            )
            continue
        responses[key] = value
    return responses, problems


def normalize_responses(
    inputs: Sequence[TaskInput], raw: Mapping[str, object] | None
) -> tuple[dict[str, object], list[InputProblem]]:
    """Responses in either shape as ``{id: value}``, with keys no input has as problems
    (they are dropped). Both shapes may come together: ``{id: value, "answers": {...}}``
    (the tool's answers win)."""
    if not raw:
        return {}, []
    known = {item.id for item in inputs}
    if is_tool_answer(raw) and "answers" not in known:
        # The tool's answers, next to earlier ones by id: {"ci": "...", "answers": {...}}.
        rest = {key: value for key, value in raw.items() if key not in _TOOL_KEYS}
        responses, problems = normalize_responses(inputs, rest)
        answered, more = responses_from_ask_user_question(inputs, raw)
        return {**responses, **answered}, [*problems, *more]
    known |= {other_id(item) for item in inputs if item.type == "choice"}
    responses = {str(key): value for key, value in raw.items() if key in known}
    problems = _group_labels_by_id(inputs, responses)
    problems += [
        InputProblem(
            str(key)[:200],
            shown_value(value),
            "is not an input of this task",
            f"answer with the ids of its inputs: {', '.join(sorted(known)) or 'none'}",
        )
        for key, value in raw.items()
        if key not in known
    ]
    return responses, problems


def _group_labels_by_id(
    inputs: Sequence[TaskInput], responses: dict[str, object]
) -> list[InputProblem]:
    """A group's label given as the value of an input (by id) is refused (and removed from
    ``responses``): it names several options, and would otherwise read as typed text."""
    problems: list[InputProblem] = []
    for item in inputs:
        question = question_for(item)
        group = _group_chosen(question, responses.get(item.id))
        if group:
            problems.append(
                InputProblem(
                    item.id,
                    shown_value(responses.pop(item.id)),
                    f"is the group {group_label(group)!r}, not an option",
                    f"choose one of {', '.join(repr(o.label) for o in group)}",
                )
            )
    return problems


def _tool_question(question: Question) -> dict[str, Any]:
    groups = option_groups(question)
    if not groups:
        return _tool_entry(question, question.question, question.options)
    firsts = [QuestionOption(label=group_label(group), description=_group_description(question))
              for group in groups]  # fmt: skip
    return _tool_entry(question, question.question, [*firsts, *_other(question)])


def _tool_entry(question: Question, text: str, options: Sequence[QuestionOption]) -> dict[str, Any]:
    return {
        "question": text,
        "header": question.header,
        "options": [{"label": o.label, "description": o.description} for o in options],
        "multiSelect": question.multi_select,
    }


def _group_description(question: Question) -> str:
    which = "any of these" if question.multi_select else "one of these"
    return f"Then choose {which}"


def _listed(question: Question) -> tuple[QuestionOption, ...]:
    return tuple(o for o in question.options if not _is_other(question, o))


def _other(question: Question) -> tuple[QuestionOption, ...]:
    return tuple(o for o in question.options if _is_other(question, o))


def _is_other(question: Question, option: QuestionOption) -> bool:
    return question.type == "choice" and option.label == OTHER_LABEL


def _parts(question: Question, value: object) -> list[str]:
    """An answer's labels: a multi-select answer's, split at commas (the tool joins them
    so; multi_choice labels have none); a single answer whole."""
    if isinstance(value, list | tuple):
        return [str(part).strip() for part in value if str(part).strip()]
    if not isinstance(value, str):
        return []
    if not question.multi_select:
        return [value.strip()]
    return [part.strip() for part in value.split(",") if part.strip()]


def _joined(question: Question, picked: Sequence[str]) -> str:
    if not question.multi_select:
        return picked[0] if picked else ""
    order = {option.label: index for index, option in enumerate(question.options)}
    unique = list(dict.fromkeys(picked))
    return ", ".join(sorted(unique, key=lambda label: order.get(label, len(order))))


def _group_chosen(question: Question, value: object) -> tuple[QuestionOption, ...]:
    """The first group ``value`` still names (its follow-up unanswered), or none."""
    labels = {option.label for option in question.options}
    groups = {group_label(g): g for g in option_groups(question) if group_label(g) not in labels}
    return next((groups[part] for part in _parts(question, value) if part in groups), ())
