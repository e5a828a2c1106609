"""A run's events as a stream: what the client missed, then what happens, until ``done``.

A stream reads the run's log itself, from its own position, so a slow client only delays
itself: the run and every other client go on, and nothing is dropped. It waits for the
run's doorbell between reads (with a timeout, in case a ring came from another process).
It ends after a ``done`` line once the run has ended and nothing follows it; a resumed
pipeline's stream goes on past an earlier ``done``. Lines the service could not write to
the log (a full disk) follow the log's own, from memory, so the stream still ends with
``done``; a log that cannot be read at all ends the stream of an ended run.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from phasegate._server.event_files import LogCursor, LogLine, log_line
from phasegate._server.lifecycle import ENDED
from phasegate._server.live import LiveRun
from phasegate._server.records import EVENTS, run_dir

_MAX_ID_DIGITS = 18
"""An event id longer than this is no id the service gave."""
_RECHECK = 5.0
"""Seconds between looks at the log when no ring comes."""


async def follow(root: Path, live: LiveRun, after: int) -> AsyncIterator[LogLine]:
    """The run's log lines numbered above ``after``, as they come, until it is done."""
    cursor = LogCursor(run_dir(root, live.record.id) / EVENTS)
    while True:
        waiter = live.bell.waiter()
        for line in cursor.read_new():
            if line.number > after:
                yield line
        if live.record.status in ENDED and (live.unsaved or cursor.broken):
            for number, text in enumerate(live.unsaved, start=cursor.lines + 1):
                if number > after and (kept := log_line(number, text)) is not None:
                    yield kept
            return
        if cursor.last_event == "done" and live.record.status in ENDED:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(waiter.wait(), _RECHECK)


def resume_point(header: str | None, query: int | None) -> int:
    """The last event id the client has: the ``Last-Event-ID`` header, else the query
    parameter, else 0 (a malformed header counts as none)."""
    text = header.strip() if header is not None else ""
    if text.isascii() and text.isdigit() and len(text) <= _MAX_ID_DIGITS:
        return int(text)
    return query if query is not None and query >= 0 else 0
