"""Following a run's event stream across dropped connections.

Each connection asks for the events after the last one yielded (``Last-Event-ID``); an
event the service replays again is skipped, so none is yielded twice. A drop (a transport
error, a close before ``done``, a 502/503/504) reconnects after the stream's ``retry:``
delay or a doubling backoff, at most ``max_reconnects`` times in a row; any event received
resets the count. Any other error answer ends the stream with its ServiceError. A stream
that closes with nothing new while the run has ended (followed from after its ``done``)
ends the iteration.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx

from phasegate.client.errors import ServiceError, error_from_response
from phasegate.client.events import DONE, ServiceEvent, service_event
from phasegate.client.schema import ACTIVE
from phasegate.client.sse import SSEParser

_RETRYABLE = frozenset({502, 503, 504})
"""Statuses of a service restarting or behind a proxy: the stream tries again."""
_MAX_DELAY = 30.0


@dataclass(frozen=True, slots=True)
class Reconnects:
    """How a stream reconnects: ``connect`` and ``idle`` timeouts (seconds; idle: without a
    byte, pings included), drops allowed in a row, and the first backoff (seconds)."""

    connect: float
    idle: float
    max_reconnects: int
    backoff: float


async def follow(
    http: httpx.AsyncClient, run_id: str, last_event_id: int | None, policy: Reconnects
) -> AsyncIterator[ServiceEvent]:
    """The events of run ``run_id`` after ``last_event_id``, up to and with ``done``."""
    last, failures, retry_ms = last_event_id, 0, None
    timeout = httpx.Timeout(policy.connect, read=policy.idle)
    path = f"/v1/runs/{run_id}/events"
    while True:
        headers = {"Accept": "text/event-stream"}
        if last is not None:
            headers["Last-Event-ID"] = str(last)
        parser = SSEParser()
        reason: object
        try:
            async with http.stream("GET", path, headers=headers, timeout=timeout) as answer:
                if answer.status_code >= 400:
                    reason = error_from_response(answer.status_code, await answer.aread())
                    if answer.status_code not in _RETRYABLE:
                        raise reason
                else:
                    received = False
                    async for chunk in answer.aiter_bytes():
                        for raw in parser.feed(chunk):
                            event = service_event(raw)
                            if last is not None and event.id <= last:
                                continue  # a replay overlapping what was yielded
                            last, failures, received = event.id, 0, True
                            yield event
                            if event.event == DONE:
                                return
                    if not received and await _has_ended(http, run_id):
                        return  # followed from after its done: nothing more will come
                    reason = "the stream ended before the run's done event"
        except httpx.TransportError as exc:
            reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        retry_ms = parser.retry if parser.retry is not None else retry_ms
        failures += 1
        if failures > policy.max_reconnects:
            raise ServiceError(
                f"the event stream of run {run_id} at {http.base_url} dropped {failures} "
                f"times in a row ({reason})",
                status_code=None,
                code="stream_lost",
                advice=f"follow it again with last_event_id={last}" if last else None,
            )
        delay = policy.backoff * 2 ** (failures - 1) if retry_ms is None else retry_ms / 1000
        await asyncio.sleep(min(delay, _MAX_DELAY))


async def _has_ended(http: httpx.AsyncClient, run_id: str) -> bool:
    """Whether the service says the run has ended (False when it cannot say)."""
    answer = await http.get(f"/v1/runs/{run_id}")
    if answer.status_code >= 400:
        return False
    try:
        status = answer.json().get("status")
    except (ValueError, AttributeError):
        return False
    return isinstance(status, str) and status not in ACTIVE
