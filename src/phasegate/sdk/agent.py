"""The agent boundary: one small Protocol every agent adapter implements.

An agent runs one session in a work directory, starting from a prompt. It reports what
happens as normalized transcript entries (assistant text, tool calls and results, the
session start and the final result) through :meth:`AgentObserver.on_entry`, in order. Each
time the agent is about to stop, it awaits :meth:`AgentObserver.on_stop`: a string is the
next instruction and the session goes on with it (Claude Code: a Stop hook that blocks with
that reason); ``None`` lets it stop.

The runner records the prompts it sends (the task prompt, feedback) itself, so an agent
does not report them back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from phasegate.evidence.transcript import Entry


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentRequest:
    """What to run: the first prompt, and where."""

    prompt: str
    workdir: Path
    env: dict[str, str] = field(default_factory=dict)
    """Extra environment for the agent process, where there is one."""
    resume: str | None = None
    """A session id to continue (after a transient failure), where the agent supports it."""


class AgentObserver(Protocol):
    """What an agent reports to while it runs (implemented by the runner)."""

    def on_entry(self, entry: Entry) -> None:
        """Record one transcript entry, as it happens."""

    async def on_stop(self) -> str | None:
        """The agent wants to stop: return the next instruction, or None to let it stop."""

    def on_retry(self, *, attempt: int, reason: str, delay_ms: int, source: str) -> None:
        """A failed request is being retried (``source`` says who retries, e.g. the CLI)."""


@runtime_checkable
class Agent(Protocol):
    """Anything that can run a coding-agent session for phasegate."""

    name: str
    """Short name for reports and logs (``claude``, ``scripted``)."""

    async def run(self, request: AgentRequest, observer: AgentObserver) -> None:
        """Run one session to its end.

        Raises :class:`~phasegate.errors.AgentError` when the session cannot be carried out
        (API down, process crashed, timeout); entries reported before that are kept.
        """
