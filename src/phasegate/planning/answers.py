"""Checking one answer against its input: a label, labels, or a concrete value, never TBD.

The rules, for every answer whoever gave it (a person, a model, a file read by inference):

- ``text``: any concrete text; empty or whitespace, ``TBD``, ``TODO``, ``...``, ``<...>``
  and the like are refused (:func:`~phasegate.phases.placeholder_values.placeholder_problem`).
- ``choice``: one of the labels (case does not matter), or concrete text of the person's
  own; ``Other (specify)`` makes ``<id>__other`` a required concrete answer, which becomes
  the value.
- ``multi_choice``: one or more labels, as a list or joined by commas.

A refused answer is never stored: the input stays missing and the problem says what a
value must be.
"""

from __future__ import annotations

from collections.abc import Mapping

from phasegate.errors import InputProblem
from phasegate.phases.inputs import OTHER_LABEL, OTHER_SUFFIX, TaskInput
from phasegate.phases.placeholder_values import placeholder_problem

Value = str | tuple[str, ...]
"""An input's value: text, or the labels of a multi_choice."""


def other_id(item: TaskInput) -> str:
    """The id of the free-text answer that goes with choosing "Other (specify)"."""
    return f"{item.id}{OTHER_SUFFIX}"


def requirement(item: TaskInput) -> str:
    """What a value of ``item`` must be, in words."""
    labels = ", ".join(repr(label) for label in item.labels)
    if item.type == "choice":
        return (
            f"choose one of {labels}, or {OTHER_LABEL!r} with {other_id(item)} "
            "(or your own concrete text)"
        )
    if item.type == "multi_choice":
        return f"choose one or more of {labels}, as a list or separated by commas"
    return "give a concrete value (not empty, not TBD, TODO, ... or <...>)"


def check_answer(
    item: TaskInput, responses: Mapping[str, object]
) -> tuple[Value | None, list[InputProblem]]:
    """The value ``responses`` give ``item`` (None when they give none, or a refused one),
    with the problems of a refused answer."""
    if item.id not in responses:
        return None, []
    raw = responses[item.id]
    if item.type == "multi_choice":
        return _check_labels(item, raw)
    if not isinstance(raw, str):
        return None, [InputProblem(item.id, shown_value(raw), "is not text", requirement(item))]
    if item.type == "choice" and raw.strip() == OTHER_LABEL:
        return _check_other(item, responses.get(other_id(item)))
    if item.type == "text" and raw.strip() == OTHER_LABEL:
        return None, [InputProblem(item.id, raw, "is not the answer itself", requirement(item))]
    problem = placeholder_problem(raw)
    if problem is not None:
        return None, [InputProblem(item.id, raw, problem, requirement(item))]
    if item.type == "choice":
        return _label(item, raw) or raw.strip(), []
    return raw.strip(), []


def fit(item: TaskInput, raw: str | list[str]) -> Value | None:
    """A value inference read, shaped for ``item``, or None when it does not fit: a choice
    takes the first item that is one of its labels, a multi_choice every such item, text
    takes the text (items joined by commas). Placeholder text never fits."""
    items = [raw] if isinstance(raw, str) else raw
    if any(placeholder_problem(text) is not None for text in items) or not items:
        return None
    if item.type == "text":
        return ", ".join(text.strip() for text in items)
    labels = [label for label in (_label(item, text) for text in items) if label is not None]
    if item.type == "choice":
        return labels[0] if labels else None
    chosen = tuple(label for label in item.labels if label in labels)
    return chosen or None


def wants_other(item: TaskInput, responses: Mapping[str, object]) -> bool:
    """Whether ``item`` (a single choice) was answered "Other (specify)" without any text
    in ``<id>__other`` yet: its follow-up question is due."""
    raw = responses.get(item.id)
    return (
        item.type == "choice"
        and isinstance(raw, str)
        and raw.strip() == OTHER_LABEL
        and other_id(item) not in responses
    )


def _check_other(item: TaskInput, other: object) -> tuple[Value | None, list[InputProblem]]:
    field = other_id(item)
    need = f"type the value meant by {OTHER_LABEL!r}"
    if other is None:  # not refused: still to be asked (the follow-up question)
        return None, []
    if not isinstance(other, str):
        return None, [InputProblem(field, shown_value(other), "is not text", need)]
    problem = placeholder_problem(other)
    if problem is None and other.strip() == OTHER_LABEL:
        problem = "is the option's label, not a value"
    if problem is not None:
        return None, [InputProblem(field, other, problem, need)]
    return other.strip(), []


def _check_labels(item: TaskInput, raw: object) -> tuple[Value | None, list[InputProblem]]:
    if isinstance(raw, str):
        parts = [part.strip() for part in raw.split(",")]
    elif isinstance(raw, list | tuple) and all(isinstance(part, str) for part in raw):
        parts = [part.strip() for part in raw]
    else:
        return None, [
            InputProblem(item.id, shown_value(raw), "is not a list of labels", requirement(item))
        ]
    parts = [part for part in parts if part]
    unknown = [part for part in parts if _label(item, part) is None]
    if not parts or unknown:
        problem = f"{unknown[0]!r} is not an option" if unknown else "chooses nothing"
        return None, [InputProblem(item.id, shown_value(raw), problem, requirement(item))]
    chosen = {_label(item, part) for part in parts}
    return tuple(label for label in item.labels if label in chosen), []


def _label(item: TaskInput, text: str) -> str | None:
    """The label ``text`` names (case and surrounding spaces do not matter), or None."""
    wanted = text.strip().casefold()
    for label in item.labels:
        if label.casefold() == wanted:
            return label
    return None


SHOWN_CHARS = 200
"""How much of a refused value a problem repeats: enough to recognise it."""


def shown_value(value: object) -> str:
    """A refused value as a problem shows it: text as it is, anything else as its repr,
    either cut to :data:`SHOWN_CHARS` characters (an answer can be megabytes long)."""
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "…"
