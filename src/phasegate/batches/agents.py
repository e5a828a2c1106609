"""The agent factories of batch units: Claude Code with each unit's model, timeout and cost
cap, and offline, the real CLI against a scripted model server started for the unit."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from phasegate.batches.outcome import UnitAgent
from phasegate.batches.units import Unit


@dataclass(frozen=True, slots=True)
class ClaudeAgents:
    """Claude Code for every unit; ``cli_path`` runs another CLI than the bundled one.

    A unit with a ``model_script`` replays it from the start on a scripted model server of its
    own (no key, no network), through the same CLI.
    """

    cli_path: str | None = None

    def __call__(self, unit: Unit, stack: contextlib.ExitStack) -> UnitAgent:
        """The agent for ``unit``."""
        return claude_agent(
            stack,
            model=unit.model,
            timeout=unit.timeout,
            max_cost=unit.max_cost,
            model_script=Path(unit.model_script) if unit.model_script is not None else None,
            cli_path=self.cli_path,
        )


def claude_agent(
    stack: contextlib.ExitStack,
    *,
    model: str | None,
    timeout: float,
    max_cost: float | None,
    model_script: Path | None,
    cli_path: str | None,
) -> UnitAgent:
    """Claude Code with these settings; with a ``model_script``, against a scripted model
    server replaying it (started now, stopped with ``stack``)."""
    if model_script is not None:
        from phasegate.agents.scripted.model_server import ScriptedModelServer

        server = stack.enter_context(ScriptedModelServer(model_script))
        offline = server.claude_agent(timeout=timeout, cli_path=cli_path, max_budget_usd=max_cost)
        return UnitAgent(offline, model_requests=lambda: len(server.requests))
    from phasegate.agents.claude.adapter import ClaudeAgent

    agent = ClaudeAgent(model=model, timeout=timeout, cli_path=cli_path, max_budget_usd=max_cost)
    return UnitAgent(agent)
