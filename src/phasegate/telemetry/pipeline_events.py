"""The events of a pipeline run (``tool.called`` and ``retry.scheduled`` come too, from
:mod:`~phasegate.telemetry.task_events`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from phasegate.telemetry.event import EventFields, EventName, UsageFields


@dataclass(frozen=True, slots=True, kw_only=True)
class PipelineStarted(EventFields):
    """A pipeline run begins (or resumes, in a new process), before the agent starts; a
    Ralph loop's run says what ends it in ``loop`` (``promise``, ``max_iterations``, null
    when unbounded)."""

    event: ClassVar[EventName] = "pipeline.started"
    _absent_when_none: ClassVar[frozenset[str]] = frozenset({"loop"})
    agent: str
    agent_version: str | None = None
    """The version of what the agent runs (Claude Code: the CLI's); None when unknown."""
    workdir: str
    stages: int
    stage: int
    resumed: bool
    loop: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PipelineResumed(EventFields):
    """An interrupted pipeline run continues: in its saved ``session``, or ``fresh``."""

    event: ClassVar[EventName] = "pipeline.resumed"
    _absent_when_none: ClassVar[frozenset[str]] = frozenset({"reason"})
    stage: int
    name: str
    how: Literal["session", "fresh"]
    reason: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StageStarted(EventFields):
    """A stage becomes current (``visit`` counts its visits, revisions included)."""

    event: ClassVar[EventName] = "stage.started"
    stage: int
    name: str
    visit: int


@dataclass(frozen=True, slots=True, kw_only=True)
class StageChecked(EventFields):
    """A stage's exit checks were run."""

    event: ClassVar[EventName] = "stage.checked"
    stage: int
    name: str
    attempt: int
    trigger: Literal["stop", "end"]  # a stage has no completion tools
    passed: bool
    failed: list[str]


@dataclass(frozen=True, slots=True, kw_only=True)
class StageRevision(EventFields):
    """A stage that kept failing sends the pipeline back to an earlier stage."""

    event: ClassVar[EventName] = "stage.revision"
    stage: int
    name: str
    to_stage: int
    to_name: str
    revision: int
    failed: list[str]


@dataclass(frozen=True, slots=True, kw_only=True)
class StageCompleted(EventFields):
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
class PipelineCompleted(UsageFields):
    """This process's part of a pipeline run is over; a Ralph loop's run counts the
    ``iterations`` it took."""

    event: ClassVar[EventName] = "pipeline.completed"
    _absent_when_none: ClassVar[frozenset[str]] = frozenset({"iterations"})
    verdict: str
    stages_accepted: int
    revisions: int
    sessions: int
    duration_ms: int
    error: str | None
    iterations: int | None = None
    stop_overrides: int = 0
