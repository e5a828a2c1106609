"""``{{ id }}`` placeholders: finding them, checking them against the inputs, filling them.

A placeholder is ``{{``, optional spaces, an input id, optional spaces, ``}}``. Text such as
``${{ secrets.TOKEN }}`` (a GitHub Actions expression) or ``{{ a.b }}`` is not one and stays
as it is. Values are substituted as text in one pass: a value that itself contains
``{{ other }}`` is never filled in again, and nothing in a value is evaluated.

Placeholders are checked and filled only in a definition that declares inputs: in one that
declares none, ``{{ anything }}`` is literal text (a template the agent should write, a
pagent or Ralph prompt) and stays as it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from phasegate._files.models import LocatedValueError
from phasegate.errors import InputProblem, InputsInvalidError
from phasegate.phases.conditions import NOT_APPLICABLE_TEXT, ConditionValue, applicability
from phasegate.phases.inputs import TaskInput
from phasegate.phases.placeholder_values import placeholder_problem

_PLACEHOLDER = re.compile(r"(?<!\$)\{\{[ \t]*([A-Za-z][A-Za-z0-9_]*)[ \t]*\}\}")

Location = tuple[str | int, ...]
"""Where a text is in its file, as pydantic locates fields: ``("phases", 0, "instructions")``."""


def placeholders_in(text: str) -> list[str]:
    """The input ids ``text`` uses, in order of appearance (repeats kept)."""
    return [match.group(1) for match in _PLACEHOLDER.finditer(text)]


def substitute(text: str, values: Mapping[str, str]) -> str:
    """``text`` with each ``{{ id }}`` of ``values`` replaced by its value, in one pass.

    A placeholder whose id ``values`` lacks is left as it is.
    """

    def _value(match: re.Match[str]) -> str:
        return values.get(match.group(1), match.group(0))

    return _PLACEHOLDER.sub(_value, text)


def check_placeholders(
    inputs: Sequence[TaskInput],
    texts: Iterable[tuple[Location, str]],
    *,
    where: str,
    also_known: Iterable[str] = (),
) -> None:
    """Refuse a placeholder naming no input, and an input no text uses.

    ``texts`` are the texts that may hold placeholders, each with its location; ``where``
    says in words where inputs may be used ("instructions", "stage prompts");
    ``also_known`` are ids declared elsewhere that the texts may use too (a pipeline's stage
    tasks' inputs). Raises :class:`~phasegate._files.models.LocatedValueError` pointing at
    the offending field.
    """
    ids = {item.id for item in inputs} | set(also_known)
    used: set[str] = set()
    for location, text in texts:
        for name in placeholders_in(text):
            if name not in ids:
                known = ", ".join(sorted(ids)) or "none declared"
                raise LocatedValueError(
                    f"{{{{ {name} }}}} names no input; declare it under inputs (inputs: {known})"
                    ", or remove the placeholder",
                    location=location,
                )
            used.add(name)
    for index, item in enumerate(inputs):
        if item.id not in used:
            raise LocatedValueError(
                f"input {item.id!r} is never used; write {{{{ {item.id} }}}} in the {where}, "
                "or remove the input",
                location=("inputs", index),
            )


def refuse_repeated_ids(inputs: Sequence[TaskInput]) -> None:
    """Refuse two inputs with the same id, or the same question (answers are matched to
    questions by their text)."""
    for kind, values in (
        ("id", [i.id for i in inputs]),
        ("question", [i.question for i in inputs]),
    ):
        seen: set[str] = set()
        for index, value in enumerate(values):
            if value in seen:
                raise LocatedValueError(
                    f"two inputs have the {kind} {value!r}; each input's {kind} must be unique",
                    location=("inputs", index, kind),
                )
            seen.add(value)


def text_values(inputs: Sequence[TaskInput], given: Mapping[str, str] | None) -> dict[str, str]:
    """The text of every input: ``given``, else its default, else ``""`` for an optional one
    and for one that does not apply (:mod:`phasegate.phases.conditions`).

    Raises :class:`~phasegate.errors.InputsInvalidError` for an id that is not an input, a
    value that is not text or is a placeholder (TBD, ``...``), a required input with no
    value and no default, and a value for an input that does not apply; nothing has run yet
    when it does.
    """
    given = dict(given or {})
    known = {item.id for item in inputs}
    problems = [
        InputProblem(
            key, _shown(value), "is not an input of this task", f"use one of: {_list(known)}"
        )
        for key, value in given.items()
        if key not in known
    ]
    values: dict[str, str] = {}
    decided = applicability(inputs, _condition_values(inputs, given))
    for item in inputs:
        value = given.get(item.id)
        if item.id not in decided.applies:  # it does not apply, or waits for a missing value
            if item.id in decided.not_applicable and isinstance(value, str) and value.strip():
                problems.append(
                    InputProblem(item.id, value, "does not apply: " + decided.reason(item),
                                 "leave it out, or change the value it depends on")
                )  # fmt: skip
            values[item.id] = NOT_APPLICABLE_TEXT
            continue
        if value is None:
            default = item.default
            value = ", ".join(default) if isinstance(default, tuple) else default
        if value is None:
            if item.required:
                problems.append(
                    InputProblem(item.id, None, "is required but has no value", "give its value")
                )
            values[item.id] = ""
            continue
        if not isinstance(value, str):
            problems.append(InputProblem(item.id, _shown(value), "is not text", "give it as text"))
            continue
        problem = placeholder_problem(value)
        if problem is not None and (item.required or value.strip()):
            problems.append(InputProblem(item.id, value, problem, "give a concrete value"))
            continue
        values[item.id] = value
    if problems:
        raise InputsInvalidError(problems)
    return values


def _condition_values(
    inputs: Sequence[TaskInput], given: Mapping[str, object]
) -> dict[str, ConditionValue]:
    """The text values conditions read: given ones, else defaults."""
    values: dict[str, ConditionValue] = {}
    for item in inputs:
        value = given.get(item.id, item.default)
        if isinstance(value, str | tuple):
            values[item.id] = value
    return values


def _shown(value: object) -> str:
    return value if isinstance(value, str) else repr(value)


def _list(names: Iterable[str]) -> str:
    return ", ".join(sorted(names)) or "(this task has no inputs)"
