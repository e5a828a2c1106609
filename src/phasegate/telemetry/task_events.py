"""The events of a task run (``docs/events.md``); the last two come in pipeline runs too."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from phasegate.modes import PhaseStatus, Verdict
from phasegate.telemetry.event import EventFields, EventName, GateTrigger, UsageFields


@dataclass(frozen=True, slots=True, kw_only=True)
class RunStarted(EventFields):
    """A task run begins, before the agent starts."""

    event: ClassVar[EventName] = "run.started"
    agent: str
    agent_version: str | None = None
    """The version of what the agent runs (Claude Code: the CLI's); None when unknown."""
    workdir: str
    phases: int
    max_attempts: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PhaseStarted(EventFields):
    """The agent moved on to a phase."""

    event: ClassVar[EventName] = "phase.started"
    phase: int
    name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PhaseMarker(EventFields):
    """The agent claimed a work phase complete, by a marker line or a tool call."""

    event: ClassVar[EventName] = "phase.marker"
    phase: int
    name: str
    text: str
    source: Literal["marker", "tool"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PhaseGateChecked(EventFields):
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
class PhaseCompleted(UsageFields):
    """A phase's final account, once the run is over."""

    event: ClassVar[EventName] = "phase.completed"
    phase: int
    name: str
    status: PhaseStatus
    attempts: int
    duration_ms: int
    completed_by: str | None
    tools: dict[str, int]
    tool_errors: int
    files_changed: list[str]
    issues: list[str]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunCompleted(UsageFields):
    """A task run is over."""

    event: ClassVar[EventName] = "run.completed"
    verdict: Verdict
    attempts: int
    duration_ms: int
    files_changed: list[str]
    findings: list[str]
    reverted: bool
    error: str | None
    stop_overrides: int = 0


# -- in task runs and pipeline runs alike ---------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCalled(EventFields):
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
class RetryScheduled(EventFields):
    """A failed request (``source: claude-code``) or session (``source: phasegate``) is
    retried."""

    event: ClassVar[EventName] = "retry.scheduled"
    attempt: int
    reason: str
    delay_ms: int
    source: str
