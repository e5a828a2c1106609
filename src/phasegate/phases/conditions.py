"""Conditional inputs: ``ask_when``, checked at load, and the one rule of which inputs apply.

An input may say it applies only when other inputs have certain values::

    inputs:
      - id: category
        question: What type of change is this?
        header: Category
        type: choice
        options: [{label: Authentication}, {label: Database}, {label: Infra}]
      - id: auth_strategy
        question: Which authentication approach?
        header: Auth
        type: choice
        options: [{label: OAuth}, {label: Email/Password}, {label: Magic Link}]
        ask_when: {category: Authentication}     # or a list: {category: [A, B]}

**Matching.** A condition ``{ID: [V1, V2]}`` holds when the value of input ``ID`` is one of
the listed values, compared ignoring case and surrounding spaces. A choice answered
``Other (specify)`` has the typed text as its value, so ``{category: Frontend}`` holds when
a person typed ``Frontend``; a multi_choice holds when any chosen label is listed. Several
conditions on one input must all hold (AND). For OR across inputs, declare the input twice
under two ids, one per condition, and use both placeholders (only one of them applies, the
other renders empty).

**Applying.** Inputs are decided in dependency order (:func:`applicability`):

- an input without ``ask_when`` applies;
- an input applies when every input it names applies and has a value its condition lists;
- it does *not apply* when an input it names does not apply, has no value and will never
  be asked (not required), or has a value its condition does not list;
- otherwise it *waits*: an input it names is required, applies (or waits) and has no
  value yet. A waiting input is not asked until that input has a value.

An input that does not apply is never asked and never required, its answers are refused,
and its ``{{ id }}`` is the empty text (:data:`NOT_APPLICABLE_TEXT`).

**At load** (:func:`check_conditions`): a condition must name another input of the same
definition, list at least one concrete value the named input can take (a multi_choice's
labels; a choice's labels or any typed text, never ``Other (specify)`` itself; any concrete
text for a text input), and conditions may not form a cycle.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from phasegate._files.models import LocatedValueError
from phasegate.phases.inputs import OTHER_LABEL, TaskInput

NOT_APPLICABLE_TEXT = ""
"""What ``{{ id }}`` of an input that does not apply renders as: the empty text, as for an
optional input nobody gave a value."""

ConditionValue = str | tuple[str, ...]
"""An input's value as conditions read it: text, or the labels of a multi_choice (a
multi_choice given as text has its labels joined by commas)."""


def check_conditions(inputs: Sequence[TaskInput], *, also: Sequence[TaskInput] = ()) -> None:
    """Refuse a condition of ``inputs`` naming no input (of ``inputs`` or ``also``), a
    value the named input can never take, and a cycle of conditions.

    Raises :class:`~phasegate._files.models.LocatedValueError` at
    ``inputs.N.ask_when.ID`` (or ``inputs.N.ask_when`` for a cycle).
    """
    by_id = {item.id: item for item in also} | {item.id: item for item in inputs}
    for index, item in enumerate(inputs):
        for name, wanted in item.ask_when.items():
            where = ("inputs", index, "ask_when", name)
            named = by_id.get(name)
            if named is None:
                known = ", ".join(sorted(set(by_id) - {item.id})) or "none"
                raise LocatedValueError(
                    f"input {item.id!r} is asked when {name!r} has a value, but no input has "
                    f"the id {name!r}; name one of: {known}",
                    location=where,
                )
            for value in wanted:
                problem = _impossible(named, value)
                if problem is not None:
                    raise LocatedValueError(
                        f"input {item.id!r} is asked when {name!r} is {value!r}, but {problem}",
                        location=where,
                    )
    for index, item in enumerate(inputs):
        cycle = _cycle_from(item.id, by_id)
        if cycle:
            raise LocatedValueError(
                f"input {item.id!r} depends on itself through ask_when "
                f"({' -> '.join(cycle)}); break the cycle",
                location=("inputs", index, "ask_when"),
            )


def _impossible(named: TaskInput, value: str) -> str | None:
    """Why ``named`` can never have the value ``value``, or None when it can."""
    if value.strip().casefold() == OTHER_LABEL.casefold():
        return (
            f"{OTHER_LABEL!r} is never a value (the typed text is); list the texts a person "
            "may type instead"
        )
    if named.type == "multi_choice" and _label(named, value) is None:
        labels = ", ".join(repr(label) for label in named.labels)
        return f"it is not one of its options ({labels})"
    return None


def _cycle_from(start: str, by_id: Mapping[str, TaskInput]) -> list[str]:
    """The ids of a cycle of conditions through ``start`` (``[a, b, a]``), or []."""
    path: list[str] = [start]
    seen: set[str] = set()

    def walk(current: str) -> bool:
        item = by_id.get(current)
        for name in item.ask_when if item is not None else ():
            if name == start:
                path.append(name)
                return True
            if name in seen:
                continue
            seen.add(name)
            path.append(name)
            if walk(name):
                return True
            path.pop()
        return False

    return path if walk(start) else []


def condition_holds(named: TaskInput, value: ConditionValue, wanted: Sequence[str]) -> bool:
    """Whether ``value``, the value of ``named``, is one of ``wanted`` (any case; a
    multi_choice when any of its chosen labels is)."""
    if not isinstance(value, str):
        chosen = [str(text) for text in value]
    elif named.type == "multi_choice":
        chosen = value.split(",")
    else:
        chosen = [value]
    listed = {text.strip().casefold() for text in wanted}
    return any(text.strip().casefold() in listed for text in chosen if text.strip())


@dataclass(frozen=True, slots=True)
class Applicability:
    """Which inputs apply, which do not, and which wait for an input they name."""

    applies: frozenset[str]
    not_applicable: frozenset[str]
    waiting: frozenset[str]

    def reason(self, item: TaskInput) -> str:
        """Why ``item`` does not apply (or waits), in words: its conditions."""
        return "it is asked only when " + describe_conditions(item)


def describe_conditions(item: TaskInput) -> str:
    """``item``'s conditions in words: ``category is 'Authentication'`` (and ...)."""
    parts = []
    for name, wanted in item.ask_when.items():
        shown = " or ".join(repr(value) for value in wanted)
        parts.append(f"{name} is {shown}")
    return " and ".join(parts)


def applicability(
    inputs: Sequence[TaskInput], values: Mapping[str, ConditionValue]
) -> Applicability:
    """Which of ``inputs`` apply given ``values`` (inferred, defaulted and answered, by id):
    the rule of the module docstring. A value of an input that does not apply is ignored.
    ``inputs`` must be free of cycles (as loaded)."""
    by_id = {item.id: item for item in inputs}
    state: dict[str, str] = {}

    def decide(ident: str) -> str:
        if ident in state:
            return state[ident]
        state[ident] = "waiting"  # guards a cycle that escaped the load check
        item = by_id[ident]
        result = "applies"
        for name, wanted in item.ask_when.items():
            named = by_id.get(name)
            if named is None:
                result = "not_applicable"
                break
            named_state = decide(name)
            if named_state == "not_applicable":
                result = "not_applicable"
                break
            value = values.get(name)
            if value is None or value == "" or value == ():
                if (named.required and named_state == "applies") or named_state == "waiting":
                    result = "waiting"
                    continue
                result = "not_applicable"
                break
            if named_state == "waiting":
                result = "waiting"
                continue
            if not condition_holds(named, value, wanted):
                result = "not_applicable"
                break
        state[ident] = result
        return result

    for item in inputs:
        decide(item.id)
    return Applicability(
        applies=frozenset(key for key, value in state.items() if value == "applies"),
        not_applicable=frozenset(key for key, value in state.items() if value == "not_applicable"),
        waiting=frozenset(key for key, value in state.items() if value == "waiting"),
    )


def _label(item: TaskInput, text: str) -> str | None:
    wanted = text.strip().casefold()
    return next((label for label in item.labels if label.casefold() == wanted), None)
