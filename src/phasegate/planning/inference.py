"""Inference: each input's value from its rules, read-only, with the source it came from.

An input's rules are tried in order; the first whose value fits the input (a label of a
choice, concrete text; :func:`~phasegate.planning.answers.fit`) gives the value, and its
``source`` says which rule and what it read (``file_exists: .github/workflows/ci.yml``,
``detect language: pyproject.toml``). An input no rule gives a value stays to be answered,
or takes its default. Same work directory, environment and context: same values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from phasegate._secrets import redact_text
from phasegate.phases.inputs import (
    ContextRule,
    DetectRule,
    EnvRule,
    FileExistsRule,
    FileValueRule,
    GitRule,
    InferRule,
    TaskInput,
)
from phasegate.planning.answers import Value, fit
from phasegate.planning.detect import Detected, detect
from phasegate.planning.facts import WorkdirFacts

MAX_VALUE_CHARS = 2000
"""The longest text inference takes from a file, a variable or the context."""


@dataclass(frozen=True, slots=True)
class Inferred:
    """A value and where it came from."""

    value: Value
    source: str


def infer_values(
    inputs: Sequence[TaskInput], facts: WorkdirFacts, context: Mapping[str, object]
) -> dict[str, Inferred]:
    """The inputs whose rules give a value, by id, in declared order."""
    reader = _Reader(facts, context)
    found: dict[str, Inferred] = {}
    for item in inputs:
        for rule in item.infer:
            read = reader.evaluate(rule)
            if read is None:
                continue
            raw, source = read
            value = fit(item, rule.value if rule.value is not None else raw)
            if value is not None:
                found[item.id] = Inferred(value, source)
                break
    return found


class _Reader:
    """Evaluates rules against one work directory and context (the detector runs once)."""

    def __init__(self, facts: WorkdirFacts, context: Mapping[str, object]) -> None:
        self.facts = facts
        self.context = context
        self._detected: Detected | None = None

    def evaluate(self, rule: InferRule) -> tuple[str | list[str], str] | None:
        """What ``rule`` read and its source, or None when it does not hold."""
        match rule:
            case FileExistsRule(glob=glob):
                paths = self.facts.glob(glob)
                return (paths[0], f"file_exists: {paths[0]}") if paths else None
            case FileValueRule(path=path, key=key):
                value = _scalar(_at(self.facts.data(path), key))
                return (value, f"file_value: {path} {key}") if value is not None else None
            case GitRule(fact=fact, remote=remote):
                text = self.facts.git(fact, remote)
                return (_short(text), f"git: {fact}") if text else None
            case EnvRule(name=name):
                text = self.facts.env(name)
                return (_short(text), f"env: {name}") if text else None
            case ContextRule(key=key):
                value = _scalar(_at(self.context, key))
                return (value, f"context: {key}") if value is not None else None
            case DetectRule(what=what):
                return self._detect(what)

    def _detect(self, what: str) -> tuple[str | list[str], str] | None:
        if self._detected is None:
            self._detected = detect(self.facts)
        found = self._detected
        names = list(found.tools if what == "tools" else found.languages)
        if not names:
            return None
        if what == "language":
            names = names[:1]
        files = sorted({found.evidence[name] for name in names})
        return (names if what != "language" else names[0]), f"detect {what}: {', '.join(files)}"


def _at(data: object, key: str) -> object:
    """The value at dotted ``key`` (digits index lists), or None."""
    current = data
    for part in key.split("."):
        if isinstance(current, Mapping) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            return None
    return current


def _scalar(value: object) -> str | list[str] | None:
    """Text for a scalar, a list of texts for a list of scalars, else None."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return _short(str(value))
    if (
        isinstance(value, list)
        and value
        and all(
            isinstance(item, str | int | float) and not isinstance(item, bool) for item in value
        )
    ):
        return [_short(str(item)) for item in value[:50]]
    return None


def _short(text: str) -> str:
    """Text read for a value, as plans, prompts and reports may show it: secrets in it
    redacted (a remote URL's token), then cut to MAX_VALUE_CHARS."""
    return redact_text(text)[:MAX_VALUE_CHARS]
