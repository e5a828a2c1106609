"""A run's life as a state machine: which status may follow which, and nothing else.

::

    queued ──▶ running ──▶ finished | failed | cancelled | interrupted
      │                                                        │
      ├──▶ cancelled                                           │
      └──▶ interrupted ◀───────────────────────────────────────┘
              │
              └──(resume)──▶ queued
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from phasegate._server.records import RunRecord
from phasegate.modes import RunStatus
from phasegate.telemetry.events import EventData, RunInterrupted

TRANSITIONS: dict[RunStatus, frozenset[RunStatus]] = {
    "queued": frozenset({"running", "cancelled", "interrupted"}),
    "running": frozenset({"finished", "failed", "cancelled", "interrupted"}),
    "interrupted": frozenset({"queued"}),
    "finished": frozenset(),
    "failed": frozenset(),
    "cancelled": frozenset(),
}
"""Every status and the statuses it may move to."""

ENDED: frozenset[RunStatus] = frozenset({"finished", "failed", "cancelled", "interrupted"})


@dataclass(frozen=True, slots=True)
class Ending:
    """How a run ended: its status, the events that say why, and what its record gains."""

    status: RunStatus
    closing: list[EventData] = field(default_factory=list)
    changes: dict[str, object] = field(default_factory=dict)


def interrupted(record: RunRecord, reason: str, **changes: object) -> Ending:
    """How ``record``'s run ends when the service stops or restarts under it."""
    resumable = record.kind == "pipeline" or record.started_at is None
    return Ending("interrupted", [RunInterrupted(reason=reason, resumable=resumable)], changes)


class TransitionError(RuntimeError):
    """A status change the machine does not allow (a bug in the service, not in a request)."""


def moved(record: RunRecord, status: RunStatus, **changes: object) -> RunRecord:
    """``record`` in ``status``, with ``changes``; the times of starting and ending are set."""
    if status not in TRANSITIONS[record.status]:
        raise TransitionError(f"run {record.id}: {record.status} cannot become {status}")
    update: dict[str, object] = {"status": status, **changes}
    if status == "running":
        update["started_at"] = now()
    if status in ENDED:
        update["finished_at"] = now()
    if status == "queued":
        update.update(finished_at=None, verdict=None, error=None)
    return record.model_copy(update=update)


def now() -> str:
    """The time as records and responses write it: UTC, ISO 8601, milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
