"""claude-agent-sdk message objects → the stream-json shape transcripts are built from.

The SDK parses Claude Code's stream-json lines into dataclasses; this module turns them
back into the raw JSON shape, which
:func:`phasegate.evidence.stream_json.entries_from_message` normalizes, so a live run and a
saved transcript go through the same code. It reads attributes only and never imports
claude_agent_sdk itself.
"""

from __future__ import annotations

from typing import Any

from phasegate.evidence.message_kinds import USAGE_EVENTS


def sdk_message_as_json(message: object) -> dict[str, Any] | None:
    """An SDK message object in Claude Code's stream-json shape, or None if unknown."""
    kind = type(message).__name__
    if kind == "SystemMessage":
        data = getattr(message, "data", None)
        return {
            **(data if isinstance(data, dict) else {}),
            "type": "system",
            "subtype": getattr(message, "subtype", None),
        }
    if kind == "AssistantMessage":
        return {
            "type": "assistant",
            "error": getattr(message, "error", None),
            "parent_tool_use_id": getattr(message, "parent_tool_use_id", None),
            "message": {
                "id": getattr(message, "message_id", None),
                "model": getattr(message, "model", None),
                "usage": getattr(message, "usage", None),
                "content": [_block(b) for b in getattr(message, "content", [])],
            },
        }
    if kind == "UserMessage":
        content = getattr(message, "content", None)
        return {
            "type": "user",
            "parent_tool_use_id": getattr(message, "parent_tool_use_id", None),
            "message": {
                "content": content
                if isinstance(content, str)
                else [_block(b) for b in content or []]
            },
        }
    if kind == "StreamEvent":
        event = getattr(message, "event", None)
        if not isinstance(event, dict) or event.get("type") not in USAGE_EVENTS:
            return None  # a content delta: the assistant message repeats it in full
        return {
            "type": "stream_event",
            "event": event,
            "parent_tool_use_id": getattr(message, "parent_tool_use_id", None),
        }
    if kind == "ResultMessage":
        fields = (
            "subtype", "is_error", "duration_ms", "num_turns", "session_id", "total_cost_usd",
            "usage", "result", "api_error_status", "terminal_reason",
        )  # fmt: skip
        return {"type": "result", **{name: getattr(message, name, None) for name in fields}}
    return None


def _block(block: object) -> dict[str, Any]:
    kind = type(block).__name__
    if kind == "TextBlock":
        return {"type": "text", "text": getattr(block, "text", "")}
    if kind == "ToolUseBlock":
        return {
            "type": "tool_use",
            "id": getattr(block, "id", ""),
            "name": getattr(block, "name", ""),
            "input": getattr(block, "input", {}),
        }
    if kind == "ToolResultBlock":
        return {
            "type": "tool_result",
            "tool_use_id": getattr(block, "tool_use_id", ""),
            "content": getattr(block, "content", None),
            "is_error": getattr(block, "is_error", None),
        }
    return {"type": kind}  # thinking and server-tool blocks carry no evidence here
