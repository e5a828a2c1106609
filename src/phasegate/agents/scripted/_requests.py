"""Reading Messages API requests the way the Claude Code CLI (2.1.x) writes them.

The CLI wraps its own notes to the model in ``<system-reminder>`` blocks; they are not the
user's words and are left out of a message's text. Since Claude Code 2.1.332 the output of a
hook (a Stop hook's ``reason``: the gate's feedback, a next stage's prompt) comes wrapped the
same way, after a preamble and a ``Stop hook feedback:`` line; up to 2.1.330 it came as plain
user text starting with that line. Both read as the same text: ``Stop hook feedback:`` and
the hook's own words. The recorded requests in ``tests/fixtures/cli_requests/`` pin both.
"""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import Any

from phasegate.agents.scripted.script import LastInput
from phasegate.modes import BRANCHES_DIR

_WORKDIR = re.compile(r"^ - Primary working directory: (.+?)(?: \(was .+\))?\s*$", re.MULTILINE)
_REMINDER = re.compile(r"<system-reminder>(.*?)</system-reminder>", re.DOTALL)
# The line that starts a hook's output inside a reminder ("Stop hook feedback:" and so on).
_HOOK_OUTPUT = re.compile(r"^[A-Za-z]+ hook feedback:\n", re.MULTILINE)


def route(path: str) -> str:
    """The path without query string or trailing slash (the CLI adds ``?beta=true``)."""
    return path.split("?", 1)[0].rstrip("/")


def main_turn(method: str, path: str, body: dict[str, Any] | None) -> tuple[LastInput, str] | None:
    """For a turn of the main conversation, what its latest message holds; None otherwise.

    The agent loop always sends a ``tools`` key (an empty list under ``--tools ""``); side
    requests such as token counting, title generation or other helper prompts do not.
    """
    if method != "POST" or route(path) != "/v1/messages" or body is None or "tools" not in body:
        return None
    return classify(body)


def _blocks(content: object) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [block for block in content if isinstance(block, dict)]
    return []


def _hook_output(reminder: re.Match[str]) -> str:
    """A reminder's hook output from its ``... hook feedback:`` line on; "" for the CLI's own."""
    found = _HOOK_OUTPUT.search(reminder.group(1))
    return "" if found is None else reminder.group(1)[found.start() :].strip()


def _text_of(content: object) -> str:
    """Text a human or a hook wrote, without the CLI's own ``<system-reminder>`` blocks."""
    parts = []
    for block in _blocks(content):
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            text = _REMINDER.sub(_hook_output, block["text"]).strip()
            if text:
                parts.append(text)
    return "\n".join(parts)


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    messages = body.get("messages")
    return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []


def classify(body: dict[str, Any]) -> tuple[LastInput, str]:
    """What the latest message of a conversation holds, and its text.

    System-role entries are skipped: the CLI appends them (environment, hook notices) next to
    the messages they describe. For tool results the text is the results' content, so a
    script can react to an error message with ``contains``. A tool-result message that also
    carries text of its own (a resumed session's new instruction, which the CLI merges into
    the pending results) is a new instruction: ``user``.
    """
    conversation = [m for m in _messages(body) if m.get("role") != "system"]
    if not conversation:
        return "start", ""
    last = conversation[-1]
    results = [b for b in _blocks(last.get("content")) if b.get("type") == "tool_result"]
    if last.get("role") == "user" and results:
        instruction = _text_of(last.get("content"))
        if instruction:
            return "user", instruction
        texts = [_text_of(result.get("content")) for result in results]
        failed = any(result.get("is_error") is True for result in results)
        return ("tool_error" if failed else "tool_result"), "\n".join(t for t in texts if t)
    answered = any(m.get("role") == "assistant" for m in conversation)
    return ("user" if answered else "start"), _text_of(last.get("content"))


def first_user_text(body: dict[str, Any]) -> str:
    """The text of a conversation's first user message, without the CLI's reminders: the
    prompt it started from (a subagent's is its Agent call's ``prompt``)."""
    for message in _messages(body):
        if message.get("role") == "user":
            return _text_of(message.get("content"))
    return ""


def branch_of(where: str | None) -> str | None:
    """The pipeline branch whose folder (``.phasegate/branches/NAME``) the path ``where``
    lies in, or None."""
    if where is None:
        return None
    parts = PurePath(where).parts
    marker = tuple(BRANCHES_DIR.split("/"))
    found = [i for i in range(len(parts) - 2) if parts[i : i + 2] == marker]
    return parts[found[-1] + 2] if found else None


def workdir(body: dict[str, Any]) -> str | None:
    """The CLI's working directory, named in its environment section.

    Depending on the model, that section sits in the ``system`` field, in a system-role
    message, or in a ``<system-reminder>`` of the first user message: all are searched, the
    latest first. A session forked into another directory (a pipeline branch) carries its
    parent's section in its history and a later one naming the new directory
    (``Primary working directory: NEW (was OLD)``, Claude Code 2.1.332): the later one wins.
    """
    sources: list[object] = [message.get("content") for message in _messages(body)][::-1]
    sources.append(body.get("system"))
    for source in sources:
        for block in reversed(_blocks(source)):
            text = block.get("text")
            found = _WORKDIR.findall(text) if isinstance(text, str) else []
            if found:
                return str(found[-1])
    return None
