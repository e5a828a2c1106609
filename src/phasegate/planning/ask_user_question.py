"""Claude Code's ``AskUserQuestion`` tool, both ways, and reading responses in either shape.

Questions become the tool's input one to one: ``{"questions": [{"question", "header",
"options": [{"label", "description"}], "multiSelect"}]}``. The tool answers ``{"answers":
{question text: label}}`` (several labels joined by commas; a person's own text where they
typed one). :func:`normalize_responses` takes that shape or plain ``{id: value}`` and gives
``{id: value}``: a person's own text on a single choice is their value, their own text on a
free-text question is the answer; answers to questions the task does not ask are problems.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from phasegate.errors import InputProblem
from phasegate.phases.inputs import TaskInput
from phasegate.planning.answers import other_id, shown_value
from phasegate.planning.questions import Question, follow_up_text

_TOOL_KEYS = frozenset({"answers", "questions", "annotations"})


def to_ask_user_question(questions: Sequence[Question]) -> dict[str, Any]:
    """The ``AskUserQuestion`` input that asks ``questions`` (1 to 4 of them)."""
    return {
        "questions": [
            {
                "question": question.question,
                "header": question.header,
                "options": [
                    {"label": option.label, "description": option.description}
                    for option in question.options
                ],
                "multiSelect": question.multi_select,
            }
            for question in questions
        ]
    }


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
    answers = answer.get("answers")
    responses: dict[str, object] = {}
    problems: list[InputProblem] = []
    for text, value in answers.items() if isinstance(answers, Mapping) else ():
        key = by_text.get(str(text))
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
    problems = [
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
