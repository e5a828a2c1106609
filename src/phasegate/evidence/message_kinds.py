"""Which JSON values are Claude Code messages, and which of those carry evidence.

A saved transcript mixes the messages phasegate judges (the session start, the model's
turns, tool results, the run's result) with lines Claude Code writes for other readers:
partial-message deltas, hook lifecycle events, rate-limit notices, and the bookkeeping of
its own session logs. Those are known and skipped silently. Anything else is not a Claude
Code message at all (another tool's log, a phasegate event log, a bare number) and is
counted, so a reader can say that a file was not understood instead of judging it as a run
in which nothing happened.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

MessageKind = Literal["conversation", "ignored", "unrecognised"]
"""``conversation``: a message phasegate reads evidence from; ``ignored``: a Claude Code line
with nothing to judge; ``unrecognised``: not a Claude Code message."""

CONVERSATION_TYPES = frozenset({"user", "assistant", "result"})
"""Message types that carry the run itself (with ``system`` lines of subtype ``init``)."""

KNOWN_IGNORED_TYPES = frozenset(
    {
        # stream-json (`claude -p --output-format stream-json --verbose`) and SDK messages
        "stream_event",  # partial messages: deltas repeated in full later (see USAGE_EVENTS)
        "rate_limit_event",
        "tool_progress",
        "tool_use_summary",
        "auth_status",
        "keep_alive",
        "control_request",
        "control_response",
        "control_cancel_request",
        "conversation_reset",
        "streamlined_text",
        "streamlined_tool_use_summary",
        "prompt_suggestion",
        # Claude Code's session logs (~/.claude/projects/<project>/<session>.jsonl)
        "summary",
        "custom-title",
        "ai-title",
        "agent-name",
        "tag",
        "file-history-snapshot",
        "file-history-delta",
        "attribution-snapshot",
        "queue-operation",
        "permission-mode",
        "attachment",
        "progress",  # but an agent_progress record's subagent message (see message_kind)
        "last-prompt",
        "pr-link",
        "worktree-state",
        "cost-state",
        "tools-used",
        "api-request",
        "api-request-shape",
        "api-request-blob",
        "atis-latch",
    }
)
"""Claude Code line types that hold nothing phasegate judges. Every ``system`` line but
``init`` and the block-cap notification (hook events, status, retries, ``thinking_tokens``,
compaction) is skipped too."""

USAGE_EVENTS = frozenset({"message_start", "message_delta"})
"""The partial-message events read: a response's id and first usage, and its final usage."""

BLOCK_CAP_NOTIFICATION = "stop-hook-block-cap"
"""The ``key`` of the ``system`` notification Claude Code (2.1.330 and later) sends when it
ends a turn that a hook blocked too often in a row ("A hook blocked the turn from ending 9
consecutive times—overriding and ending turn")."""

SESSION_ID_KEYS = ("session_id", "sessionId")
"""Where Claude Code names the session: stream-json lines and session-log lines."""


def message_kind(message: object) -> MessageKind:
    """How a reader treats one JSON value of a saved transcript.

    A line type Claude Code adds in a later version is skipped rather than counted when it
    carries a session id, as every line the CLI writes does.
    """
    if not isinstance(message, Mapping):
        return "unrecognised"
    kind = message.get("type")
    if not isinstance(kind, str):
        return "unrecognised"
    if kind in ("user", "assistant"):
        return "conversation" if isinstance(message.get("message"), Mapping) else "unrecognised"
    if kind == "result":
        return "conversation"
    if kind == "stream_event":
        # A response's start and end carry its usage; the deltas between repeat what the
        # assistant messages say in full.
        event = message.get("event")
        usage_event = isinstance(event, Mapping) and event.get("type") in USAGE_EVENTS
        return "conversation" if usage_event else "ignored"
    if kind == "system":
        subtype = message.get("subtype")
        if subtype == "init" or message.get("key") == BLOCK_CAP_NOTIFICATION:
            return "conversation"
        # Older session logs write hook notices as system lines with no subtype, only
        # ``content`` and ``level`` (and the session id every log line has).
        notice = isinstance(message.get("content"), str) or _has_session_id(message)
        return "ignored" if isinstance(subtype, str) or notice else "unrecognised"
    if kind == "progress":
        return "conversation" if _holds_agent_message(message) else "ignored"
    if kind in KNOWN_IGNORED_TYPES or _has_session_id(message):
        return "ignored"
    return "unrecognised"


def _holds_agent_message(message: Mapping[str, Any]) -> bool:
    """Whether a ``progress`` record carries a subagent's message (``data.message``)."""
    return agent_message(message) is not None


def agent_message(progress: Mapping[str, Any]) -> dict[str, Any] | None:
    """The subagent message a ``progress`` record holds (``data.message``, Claude Code 2.0 and
    2.1), with its ``type`` taken from its role when it names none; None when it holds none."""
    data = progress.get("data")
    inner = data.get("message") if isinstance(data, Mapping) else None
    if not isinstance(inner, Mapping) or not isinstance(inner.get("message"), Mapping):
        return None
    kind = inner.get("type")
    if kind is None:
        kind = inner["message"].get("role")
    return {**inner, "type": kind} if kind in ("user", "assistant") else None


def _has_session_id(message: Mapping[str, Any]) -> bool:
    return any(isinstance(message.get(key), str) for key in SESSION_ID_KEYS)
