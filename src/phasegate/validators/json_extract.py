"""Finding the JSON an agent printed in its text.

Models print JSON in a fenced block (```json ... ```), as a whole message, or after some
prose. :func:`find_json` returns every candidate in order, each either parsed or with the
reason it does not parse, so a validator can tell "no JSON" from "broken JSON".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

_FENCED = re.compile(r"^[ \t]*(```|~~~)[ \t]*([\w+-]*)[ \t]*\n(.*?)^[ \t]*\1[ \t]*$", re.M | re.S)
_MAX_DEPTH = 200


@dataclass(frozen=True, slots=True)
class JsonCandidate:
    """One piece of text that looks like a JSON object.

    ``value`` is the parsed object when ``error`` is None; otherwise ``error`` says why
    ``source`` does not parse.
    """

    source: str
    value: object = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        """True when the candidate parsed."""
        return self.error is None


def find_json(text: str) -> list[JsonCandidate]:
    """JSON object candidates in ``text``, in order of appearance. Never raises.

    Fenced blocks labelled ``json`` (or unlabelled ones that start with ``{``) are candidates
    whatever their content; outside fences, a balanced ``{...}`` that starts a line is one.
    """
    candidates: list[tuple[int, JsonCandidate]] = []
    fenced_spans: list[tuple[int, int]] = []
    for match in _FENCED.finditer(text):
        fenced_spans.append(match.span())
        label, body = match.group(2).lower(), match.group(3).strip()
        if label == "json" or (not label and body.startswith(("{", "["))):
            candidates.append((match.start(), _parse(body)))
    position = 0
    while (start := _next_object_start(text, position)) is not None:
        if any(low <= start < high for low, high in fenced_spans):
            position = start + 1
            continue
        end = _balanced_end(text, start)
        if end is None:
            candidates.append((start, _parse(text[start:].strip())))
            break
        candidates.append((start, _parse(text[start:end])))
        position = end
    return [candidate for _, candidate in sorted(candidates, key=lambda item: item[0])]


def _next_object_start(text: str, position: int) -> int | None:
    """The next ``{`` at the start of a line (after optional indentation)."""
    while True:
        start = text.find("{", position)
        if start < 0:
            return None
        line_start = text.rfind("\n", 0, start) + 1
        if not text[line_start:start].strip():
            return start
        position = start + 1


def _balanced_end(text: str, start: int) -> int | None:
    """Index just past the ``}`` closing the object at ``start``, honouring strings."""
    depth = 0
    in_string = False
    escaped = False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return index + 1
    return None


def _parse(source: str) -> JsonCandidate:
    if _nesting_depth(source) > _MAX_DEPTH:
        return JsonCandidate(source, error=f"nested deeper than {_MAX_DEPTH} levels")
    try:
        value = json.loads(source)
    except json.JSONDecodeError as exc:
        return JsonCandidate(source, error=f"{exc.msg} (line {exc.lineno}, column {exc.colno})")
    except ValueError as exc:  # e.g. integer strings longer than Python allows
        return JsonCandidate(source, error=str(exc))
    except RecursionError:  # brackets inside strings can hide the real depth from the check
        return JsonCandidate(source, error=f"nested deeper than {_MAX_DEPTH} levels")
    if not isinstance(value, dict):
        return JsonCandidate(source, error=f"expected a JSON object, found {type(value).__name__}")
    return JsonCandidate(source, value=value)


def _nesting_depth(source: str) -> int:
    depth = deepest = 0
    for char in source:
        if char in "{[":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "}]":
            depth -= 1
    return deepest
