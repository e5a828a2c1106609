"""Run events: the structured record a task run or a pipeline run emits as it goes.

Each event is one frozen dataclass named after what happened (``RunStarted`` in
:mod:`~phasegate.telemetry.task_events`, ``StageChecked`` in
:mod:`~phasegate.telemetry.pipeline_events`, ...), whose ``event`` class attribute is its
name in the log (:data:`EventName`). A :class:`RunEvent` carries one of them with the run's identity
(``run_id``, ``task``, ``mode``, and ``isolation`` for a pipeline), a UTC timestamp and
:data:`SCHEMA_VERSION`. Runners hand events to an :data:`EventSink`; the log turns them into
JSON lines, the CLI into progress lines. ``docs/events.md`` documents every field.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from phasegate.modes import Isolation, Mode
from phasegate.telemetry.event import EventName
from phasegate.telemetry.pipeline_events import (
    PipelineCompleted,
    PipelineResumed,
    PipelineStarted,
    StageChecked,
    StageCompleted,
    StageRevision,
    StageStarted,
)
from phasegate.telemetry.service_events import RunCancelled, RunDone, RunInterrupted, RunQueued
from phasegate.telemetry.task_events import (
    PhaseCompleted,
    PhaseGateChecked,
    PhaseMarker,
    PhaseStarted,
    RetryScheduled,
    RunCompleted,
    RunStarted,
    ToolCalled,
)

SCHEMA_VERSION = 2
"""Version of the event line format; ``docs/events.md`` keeps its changelog."""

RUN_ID_LENGTH = 12
"""Hex digits in a run id: short enough to read in a log, long enough not to repeat."""


def new_run_id() -> str:
    """A fresh random run id (:data:`RUN_ID_LENGTH` hex digits)."""
    return uuid.uuid4().hex[:RUN_ID_LENGTH]


EventData = (
    RunStarted
    | PhaseStarted
    | ToolCalled
    | PhaseMarker
    | PhaseGateChecked
    | PhaseCompleted
    | RetryScheduled
    | RunCompleted
    | PipelineStarted
    | PipelineResumed
    | StageStarted
    | StageChecked
    | StageRevision
    | StageCompleted
    | PipelineCompleted
    | RunQueued
    | RunCancelled
    | RunInterrupted
    | RunDone
)
"""The fields of any one event."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass(frozen=True, slots=True)
class RunEvent:
    """One thing that happened in a run, with the run it belongs to."""

    data: EventData
    run_id: str
    task: str
    """The task's name; in a pipeline run, the pipeline's."""
    mode: Mode
    isolation: Isolation | None = None
    """In a pipeline run: ``session`` or ``process``; None in a task run."""
    timestamp: str = field(default_factory=_now)
    schema_version: int = SCHEMA_VERSION

    @property
    def event(self) -> EventName:
        """The event's name (``stage.checked``)."""
        return self.data.event

    @property
    def fields(self) -> dict[str, Any]:
        """The event's own fields, as in the log line."""
        return self.data.as_fields()

    def as_dict(self) -> dict[str, Any]:
        """The event as one flat JSON-ready mapping (the log line shape)."""
        common: dict[str, Any] = {
            "event": self.event,
            "timestamp": self.timestamp,
            "run_id": self.run_id,
            "task": self.task,
            "mode": self.mode,
        }
        if self.isolation is not None:
            common["isolation"] = self.isolation
        common["schema_version"] = self.schema_version
        return {**common, **self.fields}


EventSink = Callable[[RunEvent], None]
"""Receives every event of a run, in order.

A sink that writes files names them in an ``output_files`` attribute (as
:class:`~phasegate.telemetry.log.EventLog` does): runners never count those files as the
agent's work, even when they lie in the work directory.
"""


def output_files(sink: EventSink | None) -> tuple[Path, ...]:
    """The files ``sink`` writes, from its ``output_files`` attribute (none without one)."""
    files = getattr(sink, "output_files", ())
    return tuple(Path(file) for file in files)


class _FanOut:
    """Hands each event to several sinks in turn; writes the files they write."""

    def __init__(self, sinks: Sequence[EventSink]) -> None:
        self.sinks = tuple(sinks)
        self.output_files = tuple(file for sink in self.sinks for file in output_files(sink))

    def __call__(self, event: RunEvent) -> None:
        for sink in self.sinks:
            sink(event)


def fan_out(sinks: Sequence[EventSink]) -> EventSink | None:
    """One sink that hands each event to every sink in ``sinks`` (None when there are none);
    its ``output_files`` are theirs."""
    if not sinks:
        return None
    return _FanOut(sinks)
