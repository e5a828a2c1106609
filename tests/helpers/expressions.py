"""GitHub expressions (``${{ ... }}``) of the forms composite actions use, for the tests.

Context properties (an unknown property is empty), string literals, ``==`` and ``!=``
(strings compare without regard to case), ``!``, ``&&``, ``||``, parentheses, and the status
functions ``always()``, ``success()``, ``failure()``, ``cancelled()``. Anything else fails the
test that needs it, so the simulation never guesses.
"""

from __future__ import annotations

import re
from typing import Any

_EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.DOTALL)
_TOKEN = re.compile(
    r"\s*(?:('(?:[^']|'')*')|(&&|\|\||==|!=|!|\(|\))|([A-Za-z_][\w.-]*\(\))|([A-Za-z_][\w.-]*))"
)
_STATUS = re.compile(r"\b(always|success|failure|cancelled)\(\)", re.IGNORECASE)

Tokens = list[tuple[str, str]]


def substitute(text: str, context: dict[str, Any]) -> str:
    """``text`` with every ``${{ expression }}`` replaced by its value, as the runner does."""
    return _EXPRESSION.sub(lambda m: _string(evaluate(m.group(1), context)), text)


def condition_holds(condition: str, context: dict[str, Any], *, failed: bool) -> bool:
    """Whether a step's ``if:`` lets it run after earlier steps (``failed``: one of them
    failed). A condition without a status function means ``success() && (condition)``."""
    match = re.fullmatch(r"\s*\$\{\{(.*)\}\}\s*", condition, re.DOTALL)
    expression = match.group(1) if match else condition
    value = _truthy(evaluate(expression, context, failed=failed))
    return value if _STATUS.search(expression) else value and not failed


def _string(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _truthy(value: object) -> bool:
    return bool(value)


def evaluate(expression: str, context: dict[str, Any], *, failed: bool = False) -> object:
    """The value of an expression of the forms the action uses: context properties, string
    literals, ``==``, ``!=``, ``!``, ``&&``, ``||``, parentheses and the status functions."""
    tokens = _tokens(expression)
    value, rest = _or(tokens, context, failed)
    assert not rest, f"cannot evaluate {expression!r}: {rest} left"
    return value


def _tokens(expression: str) -> list[tuple[str, str]]:
    tokens, position = [], 0
    expression = expression.rstrip()
    while position < len(expression):
        match = _TOKEN.match(expression, position)
        assert match, f"cannot read {expression[position:]!r}"
        literal, operator, call, name = match.groups()
        if literal is not None:
            tokens.append(("literal", literal[1:-1].replace("''", "'")))
        elif operator is not None:
            tokens.append(("op", operator))
        elif call is not None:
            tokens.append(("call", call[:-2].lower()))
        else:
            tokens.append(("name", name))
        position = match.end()
    return tokens


def _or(tokens: Tokens, context: dict[str, Any], failed: bool) -> tuple[object, Tokens]:
    value, tokens = _and(tokens, context, failed)
    while tokens and tokens[0] == ("op", "||"):
        other, tokens = _and(tokens[1:], context, failed)
        value = value if _truthy(value) else other
    return value, tokens


def _and(tokens: Tokens, context: dict[str, Any], failed: bool) -> tuple[object, Tokens]:
    value, tokens = _compare(tokens, context, failed)
    while tokens and tokens[0] == ("op", "&&"):
        other, tokens = _compare(tokens[1:], context, failed)
        value = other if _truthy(value) else value
    return value, tokens


def _compare(tokens: Tokens, context: dict[str, Any], failed: bool) -> tuple[object, Tokens]:
    value, tokens = _unary(tokens, context, failed)
    if tokens and tokens[0] in (("op", "=="), ("op", "!=")):
        operator = tokens[0][1]
        other, tokens = _unary(tokens[1:], context, failed)
        # Strings compare without regard to case in GitHub expressions.
        same = _string(value).lower() == _string(other).lower()
        value = same if operator == "==" else not same
    return value, tokens


def _unary(tokens: Tokens, context: dict[str, Any], failed: bool) -> tuple[object, Tokens]:
    kind, text = tokens[0]
    if (kind, text) == ("op", "!"):
        value, rest = _unary(tokens[1:], context, failed)
        return not _truthy(value), rest
    if (kind, text) == ("op", "("):
        value, rest = _or(tokens[1:], context, failed)
        assert rest and rest[0] == ("op", ")"), "unbalanced parentheses"
        return value, rest[1:]
    if kind == "literal":
        return text, tokens[1:]
    if kind == "call":
        calls = {"always": True, "success": not failed, "failure": failed, "cancelled": False}
        assert text in calls, f"unknown function {text}()"
        return calls[text], tokens[1:]
    assert kind == "name", f"unexpected {text!r}"
    return _property(text, context), tokens[1:]


def _property(path: str, context: dict[str, Any]) -> object:
    """A context property such as ``steps.run.outputs.exit_code``; an unknown property of a
    known context is empty, as on GitHub."""
    first, *rest = path.split(".")
    assert first in context, f"unknown context {first!r} in {path}"
    value: Any = context[first]
    for part in rest:
        assert isinstance(value, dict), f"cannot read {path}"
        if part not in value:
            return ""
        value = value[part]
    return value
