"""Telling a workflow agent's conversation apart, as Claude Code 2.1.332 starts one.

Claude Code's Workflow tool runs a JavaScript script; each ``agent(prompt, {label, ...})``
call in it starts a workflow agent, whose first user message is
:data:`~phasegate.agents.scripted.script.WORKFLOW_HARNESS`, a paragraph of framing, ``The
computed task text follows:`` and the prompt with every line indented by two spaces. The
label is in no request (nor in any hook): the only place the model server can learn it is the
script it sent itself, so :func:`agent_calls` reads the script's ``agent()`` calls whose
prompt and ``label`` are plain string literals. A prompt built at run time (a template with
``${...}``, a variable) cannot be read back; such an agent is named by its task text.
"""

from __future__ import annotations

import re

from phasegate.agents.scripted.script import WORKFLOW_HARNESS

_FOLLOWS = "The computed task text follows:"
_CALL = re.compile(r"(?<![\w$.])agent\s*\(")
_LABEL = re.compile(r"(?<![\w$])label\s*:\s*")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


def task_text(first_user_text: str) -> str | None:
    """A workflow agent's task (its ``agent()`` prompt, unindented), or None when the first
    user message is not a workflow agent's."""
    if not first_user_text.startswith(WORKFLOW_HARNESS):
        return None
    _, found, after = first_user_text.partition(_FOLLOWS)
    text = after if found else first_user_text[len(WORKFLOW_HARNESS) :]
    lines = text.strip("\n").split("\n")
    return "\n".join(line.removeprefix("  ") for line in lines).strip()


def same_task(prompt: str, task: str) -> bool:
    """Whether a workflow agent's task text is ``prompt`` (whitespace runs count as one)."""
    return " ".join(prompt.split()) == " ".join(task.split())


def agent_calls(script: str) -> list[tuple[str, str]]:
    """(prompt, label) of each ``agent()`` call of a workflow script whose prompt is a string
    literal and whose options, written in the call, give ``label`` as a string literal."""
    calls: list[tuple[str, str]] = []
    for call in _CALL.finditer(script):
        prompt, end = _string_at(script, call.end())
        if prompt is None:
            continue
        rest = script[end:].lstrip()
        if not rest.startswith(","):
            continue
        options = rest[1:].lstrip()
        if not options.startswith("{"):
            continue
        label = _label_in(options)
        if label is not None:
            calls.append((prompt, label))
    return calls


def _label_in(options: str) -> str | None:
    """The string literal after ``label:`` at the top level of the object ``options`` opens."""
    depth, index = 0, 0
    while index < len(options):
        char = options[index]
        if char in "'\"`":
            _, index = _string_at(options, index, raw=True)
            continue
        if char in "{[(":
            depth += 1
        elif char in "}])":
            depth -= 1
            if depth == 0:
                return None
        elif depth == 1 and (found := _LABEL.match(options, index)) is not None:
            label, _ = _string_at(options, found.end())
            return label
        index += 1
    return None


def _string_at(text: str, start: int, *, raw: bool = False) -> tuple[str | None, int]:
    """The JavaScript string literal starting at ``start`` (after blanks), unescaped, and
    where it ends; None for anything else, or a template literal with ``${...}`` (unless
    ``raw``, which only skips over it)."""
    index = start
    while index < len(text) and text[index].isspace():
        index += 1
    if index >= len(text) or text[index] not in "'\"`":
        return None, index
    quote, index, parts = text[index], index + 1, []
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            following = text[index + 1]
            if following != "\n":
                parts.append(_ESCAPES.get(following, following))
            index += 2
            continue
        if char == quote:
            value = "".join(parts)
            if quote == "`" and "${" in value and not raw:
                return None, index + 1
            return value, index + 1
        parts.append(char)
        index += 1
    return None, index
