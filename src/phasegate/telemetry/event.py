"""What every run event shares: its name (:data:`EventName`) and the base of its fields.

Each event is a frozen dataclass whose ``event`` class attribute is its name in the log;
the task-run events live in :mod:`~phasegate.telemetry.task_events`, the pipeline-run
events in :mod:`~phasegate.telemetry.pipeline_events`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

EventName = Literal[
    "run.started",
    "phase.started",
    "tool.called",
    "phase.marker",
    "phase.gate",
    "phase.completed",
    "retry.scheduled",
    "run.completed",
    "pipeline.started",
    "pipeline.resumed",
    "stage.started",
    "stage.checked",
    "stage.revision",
    "stage.completed",
    "pipeline.completed",
    "run.queued",
    "run.cancelled",
    "run.interrupted",
    "done",
]

GateTrigger = Literal["stop", "tool", "end"]
"""What made the gate check: the agent stopping, a completion tool call, the session's end."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EventFields:
    """The fields of one event; a subclass per event name."""

    event: ClassVar[EventName]
    _absent_when_none: ClassVar[frozenset[str]] = frozenset()
    """Fields left out of the line (not written as null) when they are None."""

    def as_fields(self) -> dict[str, Any]:
        """The event's own fields, as they appear in a log line."""
        return {
            f.name: value
            for f in dataclasses.fields(self)
            if (value := getattr(self, f.name)) is not None or f.name not in self._absent_when_none
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageFields(EventFields):
    """Tokens and cost: the fields of the events that close a phase, a run or a pipeline."""

    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    """None when the agent does not report cost."""
