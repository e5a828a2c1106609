"""Which JSON values are Claude Code messages (phasegate.evidence.message_kinds)."""

from __future__ import annotations

from typing import Any

import pytest

from phasegate.evidence.message_kinds import (
    CONVERSATION_TYPES,
    KNOWN_IGNORED_TYPES,
    MessageKind,
    message_kind,
)


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ({"type": "system", "subtype": "init"}, "conversation"),
        ({"type": "user", "message": {"content": "hi"}}, "conversation"),
        ({"type": "assistant", "message": {"content": []}}, "conversation"),
        ({"type": "result"}, "conversation"),
        (
            {"type": "system", "subtype": "notification", "key": "stop-hook-block-cap"},
            "conversation",
        ),
        ({"type": "system", "subtype": "notification", "key": "stop-hook-error"}, "ignored"),
        ({"type": "system", "subtype": "api_retry"}, "ignored"),
        ({"type": "system", "subtype": "thinking_tokens"}, "ignored"),
        ({"type": "stream_event"}, "ignored"),
        ({"type": "rate_limit_event"}, "ignored"),
        ({"type": "file-history-snapshot"}, "ignored"),
        ({"type": "brand-new-line-type", "session_id": "s"}, "ignored"),
        ({"type": "brand-new-line-type", "sessionId": "s"}, "ignored"),
        ({"type": "brand-new-line-type"}, "unrecognised"),
        ({"type": "user", "message": "text"}, "unrecognised"),
        ({"type": "system", "subtype": 3}, "unrecognised"),
        ({"type": 5, "session_id": "s"}, "unrecognised"),
        ({"role": "user", "content": "hi"}, "unrecognised"),
        ([{"type": "result"}], "unrecognised"),
        ("result", "unrecognised"),
    ],
)
def test_each_value_has_one_kind(message: Any, kind: MessageKind) -> None:
    """Conversation messages carry evidence; known lines and session-stamped new ones are
    ignored; anything else is not a Claude Code message."""
    assert message_kind(message) == kind


def test_the_ignored_types_never_include_a_conversation_type() -> None:
    """The list of known-but-ignored types cannot swallow what the judge reads."""
    assert not (KNOWN_IGNORED_TYPES & (CONVERSATION_TYPES | {"system"}))
