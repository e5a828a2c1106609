"""The events the HTTP service adds to a run's log: before the agent starts and after it ends.

A run started through ``phasegate serve`` has the events of a task or pipeline run, framed by
these: ``run.queued`` when it is accepted, ``run.cancelled`` or ``run.interrupted`` when it
ends early, and always a final ``done`` with the status the service gives it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from phasegate.telemetry.event import EventFields, EventName


@dataclass(frozen=True, slots=True, kw_only=True)
class RunQueued(EventFields):
    """The service accepted the run; it starts when a slot is free."""

    event: ClassVar[EventName] = "run.queued"
    kind: Literal["task", "pipeline"]
    position: int
    """1 when the run is next to start; 0 when a slot is free for it now."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunCancelled(EventFields):
    """The run was cancelled on request: its agent was stopped, or it never started."""

    event: ClassVar[EventName] = "run.cancelled"
    started: bool
    """Whether the agent had started."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunInterrupted(EventFields):
    """The service stopped or restarted before the run finished."""

    event: ClassVar[EventName] = "run.interrupted"
    reason: str
    resumable: bool
    """Whether resuming continues it (a pipeline)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunDone(EventFields):
    """The last event of a run (until a resumed pipeline continues it)."""

    event: ClassVar[EventName] = "done"
    status: str
    """``finished``, ``failed``, ``cancelled`` or ``interrupted``."""
    verdict: str | None
    """The report's verdict, when the run ended with a report."""
