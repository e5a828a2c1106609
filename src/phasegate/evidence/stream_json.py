"""Normalizing Claude Code messages into transcript entries.

Claude Code's ``--output-format stream-json`` writes one JSON object a line; claude-agent-sdk
parses the same objects into its message classes, and Claude Code's own session logs hold the
same ``user`` and ``assistant`` objects with bookkeeping around them.
:func:`entries_from_message` handles the raw object form, so a saved transcript can be judged
offline, and the SDK adapter reuses it. Reading whole files (JSON lines, arrays, session logs)
is :mod:`phasegate.evidence.saved_transcript`.

Nothing here raises on odd input: unknown message types and malformed fields are skipped.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from phasegate.evidence.message_kinds import BLOCK_CAP_NOTIFICATION, agent_message
from phasegate.evidence.transcript import (
    TOKEN_COUNTS,
    AgentRef,
    AssistantText,
    Entry,
    Notice,
    RunResult,
    SessionStart,
    StopOverridden,
    ToolCall,
    ToolResult,
    TurnUsage,
    Usage,
    UserText,
)

SYNTHETIC_MODEL = "<synthetic>"

DELEGATING_TOOLS = frozenset({"Agent", "Task"})
"""The tools that start a subagent (Claude Code named it ``Task`` before 2.1, ``Agent``
since; the input's ``subagent_type`` is the subagent's kind)."""

SIDECHAIN = "sidechain"
"""The id of a subagent a session-log line marks as a sidechain without naming it."""


_BLOCKS = re.compile(r"(\d+) consecutive times")


class MessageReader:
    """Reads one session's Claude Code messages, in order, into transcript entries.

    Only partial messages (``stream_event``, sent under ``--include-partial-messages``) need
    the order: a response's final usage comes in its ``message_delta`` event, which does not
    repeat the response's id that ``message_start`` gave, so the reader remembers the response
    each stream (the session's, or a subagent's) is in. Every other message is read alone,
    as :func:`entries_from_message` reads it.
    """

    def __init__(self) -> None:
        self._streaming: dict[str | None, tuple[str | None, Usage]] = {}
        self._delegated: dict[str, str | None] = {}
        """Each Agent (Task) call seen, by id: the subagent type it asked for."""
        self._pending: list[str] = []
        """Agent (Task) calls without a result yet, oldest first."""
        self._subagent_ids: set[tuple[str, str]] = set()
        """(kind, id) of the subagent calls and results already read: Claude Code may
        keep a subagent's messages twice (``progress`` records and its own file)."""
        self.started_by: dict[str, str] = {}
        """Subagent id → the Agent (Task) call whose result names it (``toolUseResult``)."""

    def entries(self, message: Mapping[str, Any]) -> list[Entry]:
        """The transcript entries ``message`` contributes, every subagent call and result
        named with its :class:`~phasegate.evidence.transcript.AgentRef` and read once."""
        if message.get("type") != "stream_event":
            return self._attributed(entries_from_message(message), message)
        event = message.get("event")
        parent = _str_or_none(message.get("parent_tool_use_id"))
        if not isinstance(event, Mapping):
            return []
        if event.get("type") == "message_start":
            body = event.get("message")
            body = body if isinstance(body, Mapping) else {}
            usage = body.get("usage")
            self._streaming[parent] = (
                _str_or_none(body.get("id")),
                _usage(usage if isinstance(usage, Mapping) else {}, None),
            )
            return []
        if event.get("type") == "message_delta":
            if parent not in self._streaming:
                return []  # its start was not seen (a cut transcript): the blocks' counts stay
            message_id, usage = self._streaming.pop(parent)
            delta = event.get("usage")
            # The delta's counts are cumulative for the response: each one it has replaces
            # the start's (the API sends output_tokens always, the input counts sometimes).
            final = usage.model_copy(
                update={
                    name: count
                    for name in TOKEN_COUNTS
                    if isinstance(delta, Mapping)
                    and (count := _int_or_none(delta.get(name))) is not None
                }
            )
            return [TurnUsage(message_id=message_id, usage=final, final=True)]
        return []

    def _attributed(self, entries: list[Entry], message: Mapping[str, Any]) -> list[Entry]:
        """``entries`` with their subagent's type and parent call filled in from the Agent
        (Task) calls read before, repeats of a subagent's calls and results left out."""
        kept: list[Entry] = []
        for entry in entries:
            if isinstance(entry, ToolCall | ToolResult) and entry.agent is not None:
                key = (
                    ("call", entry.id)
                    if isinstance(entry, ToolCall)
                    else ("result", entry.tool_use_id)
                )
                if key in self._subagent_ids:
                    continue
                self._subagent_ids.add(key)
                entry = entry.model_copy(update={"agent": self._resolved(entry.agent)})
            if isinstance(entry, ToolCall) and entry.name in DELEGATING_TOOLS:
                wanted = entry.input.get("subagent_type")
                self._delegated[entry.id] = wanted if isinstance(wanted, str) else None
                self._pending.append(entry.id)
            elif isinstance(entry, ToolResult) and entry.tool_use_id in self._delegated:
                if entry.tool_use_id in self._pending:
                    self._pending.remove(entry.tool_use_id)
                named = _started_agent(message)
                if named is not None:
                    self.started_by[named] = entry.tool_use_id
            kept.append(entry)
        return kept

    def _resolved(self, agent: AgentRef) -> AgentRef:
        """``agent`` with the Agent (Task) call that started it and the type it asked for.

        A line that names no parent call (an old session log's sidechain) belongs to the one
        Agent call still running, when exactly one is."""
        if agent.parent is not None and agent.id != SIDECHAIN:
            # A progress record names its agent's call: the agent's own file is placed by it
            # even when that call's result names no agent (a subagent that failed).
            self.started_by.setdefault(agent.id, agent.parent)
        parent = agent.parent or self.started_by.get(agent.id)
        if parent is None and len(self._pending) == 1:
            parent = self._pending[0]
        if parent is None:
            return agent
        kind = agent.type or self._delegated.get(parent)
        # A nameless sidechain is named by the call that started it, so two are told apart.
        name = parent if agent.id == SIDECHAIN else agent.id
        return agent.model_copy(update={"id": name, "parent": parent, "type": kind})


def entries_from_message(message: Mapping[str, Any]) -> list[Entry]:
    """The transcript entries one Claude Code message (in its JSON form) contributes; a
    response's final usage, and a subagent's type, need the messages before it
    (:class:`MessageReader`).

    A subagent's message (its tool calls and results carry an
    :class:`~phasegate.evidence.transcript.AgentRef`) comes three ways: a stream message
    naming its ``parent_tool_use_id``, a session-log line marked ``isSidechain`` (with its
    ``agentId`` from 2.0 on), and a 2.x session log's ``progress`` record holding the
    subagent's message in ``data.message``.
    """
    kind = message.get("type")
    if kind == "progress":
        inner = _progress_message(message)
        return entries_from_message(inner) if inner is not None else []
    if kind == "system" and message.get("subtype") == "init":
        return [_session_start(message)]
    if kind == "system" and message.get("key") == BLOCK_CAP_NOTIFICATION:
        return [_stop_overridden(message)]
    if kind == "assistant":
        return _assistant_entries(message)
    if kind == "user":
        return _user_entries(message)
    if kind == "result":
        return [_run_result(message)]
    return []


def _progress_message(message: Mapping[str, Any]) -> dict[str, Any] | None:
    """The subagent message a ``progress`` record holds, as a sidechain message of its
    ``agentId`` (and ``agentType``) under ``parentToolUseID``."""
    inner = agent_message(message)
    if inner is None:
        return None
    data = message["data"]
    agent_id = _str_or_none(data.get("agentId")) or _str_or_none(inner.get("agentId"))
    parent = _str_or_none(message.get("parentToolUseID"))
    return {
        **inner,
        "isSidechain": True,
        "agentId": agent_id or parent or SIDECHAIN,
        "agentType": _str_or_none(data.get("agentType")),
        "parentToolUseID": parent,
    }


def agent_of(message: Mapping[str, Any]) -> AgentRef | None:
    """The subagent a Claude Code message came from, as far as the message itself says;
    None for the main agent's."""
    parent = _str_or_none(message.get("parent_tool_use_id"))
    if parent is not None:
        return AgentRef(id=parent, parent=parent)
    if message.get("isSidechain") is True:
        return AgentRef(
            id=_str_or_none(message.get("agentId")) or SIDECHAIN,
            type=_str_or_none(message.get("agentType")),
            parent=_str_or_none(message.get("parentToolUseID")),
        )
    return None


def _started_agent(message: Mapping[str, Any]) -> str | None:
    """The subagent an Agent (Task) call's result line names (2.x: ``toolUseResult``)."""
    result = message.get("toolUseResult")
    return _str_or_none(result.get("agentId")) if isinstance(result, Mapping) else None


def _session_start(message: Mapping[str, Any]) -> SessionStart:
    tools = message.get("tools")
    return SessionStart(
        cwd=_str_or_none(message.get("cwd")),
        session_id=_str_or_none(message.get("session_id")),
        model=_str_or_none(message.get("model")),
        tools=tuple(t for t in tools if isinstance(t, str)) if isinstance(tools, list) else (),
    )


def _stop_overridden(message: Mapping[str, Any]) -> StopOverridden:
    text = message.get("text")
    text = text if isinstance(text, str) else ""
    count = _BLOCKS.search(text)
    return StopOverridden(blocks=int(count.group(1)) if count else None, text=text)


def _assistant_entries(message: Mapping[str, Any]) -> list[Entry]:
    body = message.get("message")
    if not isinstance(body, Mapping):
        return []
    # Text from the runtime itself (API errors) or from a subagent (stream-json names its
    # parent tool call; a session log marks it a sidechain) is not the model's own answer in
    # this session: it must never complete a phase.
    agent = agent_of(message)
    not_model_output = body.get("model") == SYNTHETIC_MODEL or agent is not None
    entries: list[Entry] = []
    # A subagent's responses are not this session's answers, but their tokens are spent.
    if isinstance(body.get("usage"), Mapping):
        message_id = _str_or_none(body.get("id"))
        entries.append(TurnUsage(message_id=message_id, usage=_usage(body["usage"], None)))
    for block in _blocks(body.get("content")):
        block_type = block.get("type")
        if block_type == "text" and isinstance(block.get("text"), str):
            text = block["text"]
            entries.append(Notice(text=text) if not_model_output else AssistantText(text=text))
        elif block_type == "tool_use" and isinstance(block.get("id"), str):
            tool_input = block.get("input")
            entries.append(
                ToolCall(
                    id=block["id"],
                    name=str(block.get("name", "")),
                    input=dict(tool_input) if isinstance(tool_input, Mapping) else {},
                    agent=agent,
                )
            )
    return entries


def _user_entries(message: Mapping[str, Any]) -> list[Entry]:
    body = message.get("message")
    content = body.get("content") if isinstance(body, Mapping) else None
    if isinstance(content, str):
        return [UserText(text=content)]
    agent = agent_of(message)
    entries: list[Entry] = []
    for block in _blocks(content):
        if block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str):
            entries.append(
                ToolResult(
                    tool_use_id=block["tool_use_id"],
                    ok=block.get("is_error") is not True,
                    content=_flatten_text(block.get("content")),
                    agent=agent,
                )
            )
        elif block.get("type") == "text" and isinstance(block.get("text"), str):
            entries.append(UserText(text=block["text"]))
    return entries


def _run_result(message: Mapping[str, Any]) -> RunResult:
    raw_usage = message.get("usage")
    return RunResult(
        is_error=message.get("is_error") is True,
        subtype=_str_or_none(message.get("subtype")),
        api_error_status=_int_or_none(message.get("api_error_status")),
        terminal_reason=_str_or_none(message.get("terminal_reason")),
        num_turns=_int_or_none(message.get("num_turns")),
        duration_ms=_int_or_none(message.get("duration_ms")),
        usage=_usage(
            raw_usage if isinstance(raw_usage, Mapping) else {}, message.get("total_cost_usd")
        ),
        text=_str_or_none(message.get("result")),
    )


def _usage(usage: Mapping[str, Any], cost: object) -> Usage:
    return Usage(
        input_tokens=_int_or_none(usage.get("input_tokens")) or 0,
        output_tokens=_int_or_none(usage.get("output_tokens")) or 0,
        cache_creation_input_tokens=_int_or_none(usage.get("cache_creation_input_tokens")) or 0,
        cache_read_input_tokens=_int_or_none(usage.get("cache_read_input_tokens")) or 0,
        cost_usd=_cost_or_none(cost),
    )


def _blocks(content: object) -> list[Mapping[str, Any]]:
    if not isinstance(content, list):
        return []
    return [block for block in content if isinstance(block, Mapping)]


def _flatten_text(content: object) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(
        block["text"] for block in _blocks(content) if isinstance(block.get("text"), str)
    )


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _cost_or_none(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        cost = float(value)
    except OverflowError:  # an integer too large for a float
        return None
    return cost if math.isfinite(cost) and cost >= 0 else None


def _int_or_none(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None
