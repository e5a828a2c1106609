"""What an executor is given (:class:`UnitJob`) and what it gives back (:class:`UnitOutcome`).

Both cross process boundaries (a Ray worker runs the job and returns the outcome), so they
hold plain data and a picklable agent factory; the outcome carries the result files' bytes,
and the batch process alone writes them, once, where results belong.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from phasegate.batches.units import Unit

if TYPE_CHECKING:
    from collections.abc import Callable

    from phasegate.phases.model import Task
    from phasegate.phases.pipeline import Pipeline
    from phasegate.agents.protocol import Agent

RESULTS_VERSION = 1
"""The version of ``unit.json`` and ``batch.json``; it changes when a field changes meaning."""


@dataclass(frozen=True, slots=True)
class UnitAgent:
    """The agent built for one unit; ``model_requests`` counts the requests its model
    answered, where the factory can know (an offline scripted model server)."""

    agent: Agent
    model_requests: Callable[[], int] | None = None


class AgentFactory(Protocol):
    """Builds the agent for one unit; what it starts for that unit (a model server) is closed
    with ``stack``. It must pickle: a worker process builds its own agent."""

    def __call__(self, unit: Unit, stack: contextlib.ExitStack) -> UnitAgent: ...


@dataclass(frozen=True, slots=True)
class UnitJob:
    """One unit to run: the unit, its task or pipeline as loaded (so a worker reads no batch
    files), and the agent factory to run it with."""

    unit: Unit
    definition: Task | Pipeline
    agents: AgentFactory


@dataclass(frozen=True, slots=True)
class UnitOutcome:
    """How one unit ended, with the files of its result."""

    unit: Unit
    verdict: str
    cost_usd: float | None
    input_tokens: int
    output_tokens: int
    duration_ms: int
    error: str | None
    model_requests: int | None
    worker: str
    started_at: str
    finished_at: str
    files: dict[str, bytes] = field(default_factory=dict)

    @property
    def accepted(self) -> bool:
        """Whether the unit's run was accepted."""
        return self.verdict == "accepted"

    def record(self) -> dict[str, Any]:
        """``unit.json``: the unit and its outcome, without the files."""
        return {
            "schema_version": RESULTS_VERSION,
            "unit": self.unit.model_dump(mode="json", by_alias=True),
            "outcome": {
                "verdict": self.verdict,
                "success": self.accepted,
                "cost_usd": self.cost_usd,
                "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens,
                "duration_ms": self.duration_ms,
                "error": self.error,
                "model_requests": self.model_requests,
                "worker": self.worker,
                "started_at": self.started_at,
                "finished_at": self.finished_at,
            },
        }
