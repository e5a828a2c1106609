"""Run events: the structured record a run emits as it goes.

Each event has a name from :data:`EVENT_NAMES`, the run's identity (``run_id``, ``task``,
``mode``), a UTC timestamp, ``schema_version`` and its own fields. The runner hands events
to a callback; the logging work turns them into JSON lines, the CLI into progress lines.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

SCHEMA_VERSION = 1
"""Version of the event log line format (``docs/events.md`` keeps its changelog)."""

EVENT_NAMES = (
    "run.started",
    "phase.started",
    "tool.called",
    "phase.marker",
    "phase.gate",
    "phase.completed",
    "retry.scheduled",
    "run.completed",
)
PIPELINE_EVENT_NAMES = (
    "pipeline.started",
    "pipeline.resumed",
    "stage.started",
    "stage.checked",
    "stage.revision",
    "stage.completed",
    "pipeline.completed",
)
"""Events of a pipeline run (``tool.called`` and ``retry.scheduled`` come too)."""


@dataclass(frozen=True, slots=True)
class RunEvent:
    """One thing that happened in a run."""

    event: str
    run_id: str
    task: str
    mode: str
    fields: dict[str, Any] = field(default_factory=dict)
    timestamp: str = field(
        default_factory=lambda: datetime.now(UTC).isoformat(timespec="milliseconds")
    )
    schema_version: int = SCHEMA_VERSION

    def as_dict(self) -> dict[str, Any]:
        """The event as one flat JSON-ready mapping (the log line shape)."""
        return {
            "event": self.event,
            "timestamp": self.timestamp,
            "run_id": self.run_id,
            "task": self.task,
            "mode": self.mode,
            "schema_version": self.schema_version,
            **self.fields,
        }


EventSink = Callable[[RunEvent], None]
"""Receives every event of a run, in order."""


def fan_out(sinks: Sequence[EventSink]) -> EventSink | None:
    """One sink that hands each event to every sink in ``sinks`` (None when there are none)."""
    if not sinks:
        return None
    chosen = tuple(sinks)

    def send(event: RunEvent) -> None:
        for sink in chosen:
            sink(event)

    return send
