"""``ServiceEvent``: one event of a run's stream, as ``GET /v1/runs/{id}/events`` sends it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from phasegate.client.errors import bad_answer
from phasegate.client.sse import SSEEvent

DONE = "done"
"""The last event of a run's stream while the run has ended; its data has ``status`` and
``verdict``."""

_MAX_ID_DIGITS = 18
"""Ids are line numbers: more digits than this is not a stream the service writes."""


@dataclass(frozen=True, slots=True)
class ServiceEvent:
    """One line of a run's event log.

    ``id`` is the line's 1-based number in the log (send the last one seen as
    ``last_event_id`` to continue after it), ``event`` its name (``run.started``,
    ``phase.gate``, ``done``, ...), ``data`` the line itself, parsed.
    """

    id: int
    event: str
    data: dict[str, Any]


def service_event(raw: SSEEvent) -> ServiceEvent:
    """The service event that a parsed SSE event carries; a :class:`ServiceError` when it
    lacks a numeric id or its data is not one JSON object."""
    if not (raw.id.isascii() and raw.id.isdigit() and len(raw.id) <= _MAX_ID_DIGITS):
        raise bad_answer(f"an event without a numeric id ({raw.event!r}, id {raw.id[:40]!r})")
    try:
        data = json.loads(raw.data)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise bad_answer(f"event {raw.id} whose data is not a JSON object")
    return ServiceEvent(id=int(raw.id), event=raw.event, data=data)
