"""An agent factory for Ray tests, imported by Ray workers (they get the repository on
PYTHONPATH): one chosen unit's first attempt hangs, so a test can kill its worker mid-unit."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from phasegate.batches.agents import ClaudeAgents
from phasegate.batches.outcome import UnitAgent
from phasegate.batches.units import Unit

HANG = "replies:\n  - hang: true\n"
"""A model script whose first request is never answered."""


@dataclass(frozen=True, slots=True)
class HangOnce:
    """Units run with their own model script, except ``unit_id``'s first attempt, which
    writes its worker's pid to ``pid_file`` and then waits on a model that never answers."""

    unit_id: str
    pid_file: str
    hang_script: str

    def __call__(self, unit: Unit, stack: contextlib.ExitStack) -> UnitAgent:
        """The agent for ``unit`` in this attempt."""
        if unit.id == self.unit_id and not Path(self.pid_file).exists():
            Path(self.pid_file).write_text(str(os.getpid()))
            unit = unit.model_copy(update={"model_script": self.hang_script})
        return ClaudeAgents()(unit, stack)
