"""Run events: the structured record a task run or a pipeline run emits as it goes.

Each event is one frozen dataclass below, named after what happened (:class:`RunStarted`,
:class:`StageChecked`, ...), whose ``event`` class attribute is its name in the log
(:data:`EventName`). A :class:`RunEvent` carries one of them with the run's identity
(``run_id``, ``task``, ``mode``, and ``isolation`` for a pipeline), a UTC timestamp and
:data:`SCHEMA_VERSION`. Runners hand events to an :data:`EventSink`; the log turns them into
JSON lines, the CLI into progress lines. ``docs/events.md`` documents every field.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ClassVar, Literal

from phasegate.modes import Isolation, Mode

SCHEMA_VERSION = 2
"""Version of the event line format; ``docs/events.md`` keeps its changelog."""

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
]

GateTrigger = Literal["stop", "tool", "end"]
"""What made the gate check: the agent stopping, a completion tool call, the session's end."""


@dataclass(frozen=True, slots=True, kw_only=True)
class _Event:
    """Fields of one event; a subclass per event name."""

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


# -- task runs ----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class RunStarted(_Event):
    """A task run begins, before the agent starts."""

    event: ClassVar[EventName] = "run.started"
    agent: str
    workdir: str
    phases: int
    max_attempts: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PhaseStarted(_Event):
    """The agent moved on to a phase."""

    event: ClassVar[EventName] = "phase.started"
    phase: int
    name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCalled(_Event):
    """A tool call came back with its result: ``phase`` in a task run, ``stage`` in a
    pipeline run."""

    event: ClassVar[EventName] = "tool.called"
    _absent_when_none: ClassVar[frozenset[str]] = frozenset({"phase", "stage"})
    phase: int | None = None
    stage: int | None = None
    tool: str | None
    tool_use_id: str
    ok: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class PhaseMarker(_Event):
    """The agent claimed a work phase complete, by a marker line or a tool call."""

    event: ClassVar[EventName] = "phase.marker"
    phase: int
    name: str
    text: str
    source: Literal["marker", "tool"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PhaseGateChecked(_Event):
    """The gate judged a phase (at a stop, a completion tool call, or the session's end)."""

    event: ClassVar[EventName] = "phase.gate"
    _absent_when_none: ClassVar[frozenset[str]] = frozenset({"tool"})
    phase: int
    name: str
    attempt: int
    trigger: GateTrigger
    accepted: bool
    issues: list[str]
    tool: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PhaseCompleted(_Event):
    """A phase's final account, once the run is over."""

    event: ClassVar[EventName] = "phase.completed"
    phase: int
    name: str
    status: str
    attempts: int
    duration_ms: int
    completed_by: str | None
    tools: dict[str, int]
    tool_errors: int
    files_changed: list[str]
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    issues: list[str]


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryScheduled(_Event):
    """A failed request (``source: claude-code``) or session (``source: phasegate``) is
    retried."""

    event: ClassVar[EventName] = "retry.scheduled"
    attempt: int
    reason: str
    delay_ms: int
    source: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RunCompleted(_Event):
    """A task run is over."""

    event: ClassVar[EventName] = "run.completed"
    verdict: str
    attempts: int
    duration_ms: int
    files_changed: list[str]
    findings: list[str]
    reverted: bool
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    error: str | None


# -- pipeline runs ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class PipelineStarted(_Event):
    """A pipeline run begins (or resumes, in a new process), before the agent starts."""

    event: ClassVar[EventName] = "pipeline.started"
    agent: str
    workdir: str
    stages: int
    stage: int
    resumed: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class PipelineResumed(_Event):
    """An interrupted pipeline run continues: in its saved ``session``, or ``fresh``."""

    event: ClassVar[EventName] = "pipeline.resumed"
    _absent_when_none: ClassVar[frozenset[str]] = frozenset({"reason"})
    stage: int
    name: str
    how: Literal["session", "fresh"]
    reason: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StageStarted(_Event):
    """A stage becomes current (``visit`` counts its visits, revisions included)."""

    event: ClassVar[EventName] = "stage.started"
    stage: int
    name: str
    visit: int


@dataclass(frozen=True, slots=True, kw_only=True)
class StageChecked(_Event):
    """A stage's exit checks were run."""

    event: ClassVar[EventName] = "stage.checked"
    stage: int
    name: str
    attempt: int
    trigger: Literal["stop", "end"]  # a stage has no completion tools
    passed: bool
    failed: list[str]


@dataclass(frozen=True, slots=True, kw_only=True)
class StageRevision(_Event):
    """A stage that kept failing sends the pipeline back to an earlier stage."""

    event: ClassVar[EventName] = "stage.revision"
    stage: int
    name: str
    to_stage: int
    to_name: str
    revision: int
    failed: list[str]


@dataclass(frozen=True, slots=True, kw_only=True)
class StageCompleted(_Event):
    """A stage's visit ended: accepted, rejected, or left ``pending`` for a revision."""

    event: ClassVar[EventName] = "stage.completed"
    stage: int
    name: str
    status: str
    attempts: int
    visits: int
    duration_ms: int
    files_changed: list[str]
    checks: list[dict[str, Any]]


@dataclass(frozen=True, slots=True, kw_only=True)
class PipelineCompleted(_Event):
    """This process's part of a pipeline run is over."""

    event: ClassVar[EventName] = "pipeline.completed"
    verdict: str
    stages_accepted: int
    revisions: int
    sessions: int
    duration_ms: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    error: str | None


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
