"""Response bytes of the Anthropic Messages API: streamed events, JSON messages, errors.

Everything here is a pure function of its arguments, so the same script gives the same bytes.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from phasegate.agents.scripted.script import HttpFault

StopReason = Literal["end_turn", "tool_use"]

INPUT_TOKENS = 100
"""Input tokens reported for every response: a constant, so usage (and the cost the CLI
derives from it) never depends on request bytes such as session ids or dates."""

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def _dumps(value: object) -> str:
    # Fixed separators and key order keep the bytes stable across Python versions.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def output_tokens(blocks: list[dict[str, Any]]) -> int:
    """A deterministic stand-in for the output token count: about four characters a token."""
    size = sum(len(_dumps(block)) for block in blocks)
    return max(1, size // 4)


def message(
    message_id: str, model: str, blocks: list[dict[str, Any]], stop_reason: StopReason
) -> dict[str, Any]:
    """A complete assistant message, as a non-streaming response carries it."""
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": INPUT_TOKENS, "output_tokens": output_tokens(blocks)},
    }


def stream_events(
    message_id: str, model: str, blocks: list[dict[str, Any]], stop_reason: StopReason
) -> list[tuple[str, dict[str, Any]]]:
    """The server-sent events that stream ``blocks`` as one assistant message."""
    start = message(message_id, model, [], stop_reason)
    start["stop_reason"] = None
    start["usage"] = {"input_tokens": INPUT_TOKENS, "output_tokens": 1}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    for index, block in enumerate(blocks):
        if block["type"] == "tool_use":
            empty: dict[str, Any] = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": _dumps(block["input"])}
        else:
            empty = {**block, "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        events += [
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": empty},
            ),
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]
    events += [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": output_tokens(blocks)},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return events


def encode_sse(events: list[tuple[str, dict[str, Any]]]) -> bytes:
    """Serialize events in the ``event:`` / ``data:`` format of the streaming API."""
    return "".join(f"event: {name}\ndata: {_dumps(data)}\n\n" for name, data in events).encode()


def encode_json(value: object) -> bytes:
    """Serialize a JSON response body."""
    return _dumps(value).encode()


def error_body(fault: HttpFault) -> bytes:
    """The JSON body of an API error, typed the way the real API types that status."""
    kind = _ERROR_TYPES.get(
        fault.status, "api_error" if fault.status >= 500 else "invalid_request_error"
    )
    return encode_json({"type": "error", "error": {"type": kind, "message": fault.message}})
