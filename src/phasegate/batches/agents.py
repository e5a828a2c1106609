"""The agent factory of batch units: each unit's settings as an :class:`AgentSpec`, built by
the one agent factory (Claude Code with the unit's model, timeout and cost cap; offline, the
real CLI against a scripted model server started for the unit)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from phasegate.agents.factory import AgentSpec, build_agent
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
        script = Path(unit.model_script) if unit.model_script is not None else None
        spec = AgentSpec(model=unit.model, timeout=unit.timeout, max_cost=unit.max_cost,
                         model_script=script, cli_path=self.cli_path)  # fmt: skip
        return build_agent(spec, stack)
