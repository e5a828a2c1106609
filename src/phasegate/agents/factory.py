"""Settings to an agent: the one place a run's agent is built, whoever asks.

An :class:`AgentSpec` says which agent a run uses, in plain settings (the way a model name
becomes a model): Claude Code with a model, a time limit and a cost cap; the same CLI against
an offline scripted model server replaying a script; or the in-process scripted agent.
:func:`build_agent` turns it into a :class:`BuiltAgent`. The command line, the HTTP service
and batch units all build agents here, so a setting means the same everywhere: the cost cap
holds with a model script as with a real model.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from phasegate.agents.protocol import Agent
from phasegate.agents.scripted.script import Unmatched
from phasegate.errors import UsageError

AgentKind = Literal["claude", "scripted"]
"""``claude``: Claude Code (the real CLI; offline with a model script); ``scripted``: the
in-process scripted agent (no CLI)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentSpec:
    """Which agent a run uses.

    ``model_script`` runs Claude Code against a scripted model server replaying that script
    (no key, no network); ``script`` is the in-process scripted agent's script, for ``kind``
    ``scripted``. ``continue_script``: the scripted agent goes on where its last session left
    off (one session per pipeline stage). ``timeout`` bounds one session in seconds;
    ``max_cost`` caps its cost in USD.
    """

    kind: AgentKind = "claude"
    model: str | None = None
    timeout: float | None = None
    max_cost: float | None = None
    cli_path: str | Path | None = None
    model_script: Path | None = None
    script: Path | None = None
    continue_script: bool = False


@dataclass(frozen=True, slots=True)
class BuiltAgent:
    """The agent an :class:`AgentSpec` describes, with what its scripted model knows:
    ``model_requests`` counts the requests it answered and ``unmatched`` lists those its
    script had no reply for (both None without a script)."""

    agent: Agent
    model_requests: Callable[[], int] | None = None
    unmatched: Callable[[], list[Unmatched]] = field(default=list)


def build_agent(spec: AgentSpec, stack: contextlib.ExitStack) -> BuiltAgent:
    """The agent ``spec`` describes; a model server it starts is stopped with ``stack``.

    Raises :class:`~phasegate.errors.UsageError` for settings that contradict each other (a
    scripted agent without its script, a model script for the in-process agent), and
    :class:`~phasegate.errors.ScriptFileError` for a script that cannot be read.
    """
    if spec.kind == "scripted":
        return _scripted(spec)
    if spec.script is not None:
        raise UsageError(
            "a script of replies is for the scripted agent; Claude Code replays one through a "
            "model script",
            option="script",
        )
    cli_path = str(spec.cli_path) if spec.cli_path is not None else None
    if spec.model_script is not None:
        from phasegate.agents.scripted.model_server import ScriptedModelServer

        server = stack.enter_context(ScriptedModelServer(spec.model_script))
        options: dict[str, Any] = {"cli_path": cli_path, "max_budget_usd": spec.max_cost}
        if spec.timeout is not None:
            options["timeout"] = spec.timeout
        if spec.model is not None:
            options["model"] = spec.model
        return BuiltAgent(
            server.claude_agent(**options),
            model_requests=lambda: len(server.requests),
            unmatched=lambda: server.unmatched,
        )
    from phasegate.agents.claude.adapter import ClaudeAgent

    settings: dict[str, Any] = {"timeout": spec.timeout} if spec.timeout is not None else {}
    agent = ClaudeAgent(
        model=spec.model, cli_path=cli_path, max_budget_usd=spec.max_cost, **settings
    )
    return BuiltAgent(agent)


def _scripted(spec: AgentSpec) -> BuiltAgent:
    if spec.model_script is not None:
        raise UsageError(
            "a model script runs the real Claude Code CLI, not the scripted agent",
            option="model_script",
        )
    if spec.script is None:
        raise UsageError("the scripted agent needs a script of model replies", option="script")
    from phasegate.agents.scripted.agent import ScriptedAgent
    from phasegate.agents.scripted.script import load_script

    agent = ScriptedAgent(load_script(spec.script), continue_script=spec.continue_script)
    return BuiltAgent(agent, unmatched=lambda: agent.unmatched)
