"""Forking a Claude Code session: a new session that starts from another one's history.

The real CLI against the scripted model server, which records every request it gets: what
the forked session sent is what the model would have seen.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from phasegate.agents.protocol import AgentRequest
from phasegate.evidence.transcript import Entry, SessionStart, ToolCall
from phasegate.prompts.completion_tools import ToolAnswer
from phasegate.testing import Script
from phasegate.testing.pytest_plugin import ScriptedServerFactory

pytestmark = pytest.mark.cli


class _Listener:
    """An observer that keeps the entries and lets every stop happen."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []

    def on_entry(self, entry: Entry) -> None:
        self.entries.append(entry)

    async def on_stop(self) -> str | None:
        return None

    def on_retry(self, *, attempt: int, reason: str, delay_ms: int, source: str) -> None:
        pass

    async def on_tool_call(self, name: str, arguments: dict[str, Any]) -> ToolAnswer:
        raise AssertionError(f"no completion tool is offered, yet {name} was called")

    def before_tool(self, call: ToolCall) -> str | None:
        return None

    def session_id(self) -> str:
        (start,) = [e for e in self.entries if isinstance(e, SessionStart)]
        assert start.session_id
        return start.session_id


def _texts(body: dict[str, Any] | None) -> str:
    """Every text the request carries, in its messages, as one string."""
    parts: list[str] = []
    for message in (body or {}).get("messages") or ():
        content = message.get("content")
        blocks = [{"text": content}] if isinstance(content, str) else content or ()
        parts += [b.get("text", "") for b in blocks if isinstance(b, dict)]
    return "\n".join(parts)


def test_a_forked_session_sees_the_parents_history_under_a_new_session_id(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """The parent's turns reach the model in the fork's first request; the fork has its own
    id, and the parent's saved session is left as it was for a second fork."""
    server = scripted_model_server(
        Script.model_validate(
            {
                "replies": [
                    {"text": "The plan: three parts, parent-said-this."},
                    {"when": "user", "contains": "first branch", "text": "Branch one done."},
                    {"when": "user", "contains": "second branch", "text": "Branch two done."},
                ]
            }
        )
    )
    agent = server.claude_agent()
    parent = _Listener()
    asyncio.run(agent.run(AgentRequest(prompt="Make a plan.", workdir=tmp_path), parent))
    parent_id = parent.session_id()

    forks: list[_Listener] = []
    for words in ("first branch", "second branch"):
        fork = _Listener()
        request = AgentRequest(
            prompt=f"Now the {words}.", workdir=tmp_path, resume=parent_id, fork=True
        )
        asyncio.run(agent.run(request, fork))
        forks.append(fork)

    ids = {parent_id, *(fork.session_id() for fork in forks)}
    assert len(ids) == 3, "each fork runs under a session id of its own"
    main = server.main_requests()
    first_of_fork = [r for r in main if r.last == "user"]
    assert len(first_of_fork) == 2
    for record, words, other in zip(
        first_of_fork,
        ("first branch", "second branch"),
        ("second branch", "first branch"),
        strict=True,
    ):
        sent = _texts(record.body)
        assert "Make a plan." in sent and "parent-said-this" in sent
        assert words in sent
        assert other not in sent, "the second fork starts from the parent, not the first fork"
