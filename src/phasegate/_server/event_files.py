"""A run's event log as the service reads and extends it.

The run's own process appends its events; the service appends ``run.queued`` before that
process starts and its closing events after it ended, so the two never write at once. Both
write whole lines, each with a single ``write`` to an ``O_APPEND`` descriptor, so a reader
never sees half a line unless a writer died in the middle of one: such a tail is skipped
until a newline completes it, and a line that is not JSON is skipped (its number still
counts, so event ids stay line numbers).
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass
from pathlib import Path

from phasegate._server.records import RunRecord
from phasegate.telemetry.events import EventData, RunEvent
from phasegate.telemetry.log import EventLog


@dataclass(frozen=True, slots=True)
class LogLine:
    """One line of a run's log: its number (the event id), its event name, its text."""

    number: int
    event: str
    text: str


def append_events(path: Path, events: list[RunEvent], secrets: tuple[str, ...] = ()) -> None:
    """Append ``events`` as log lines (``secrets`` hidden, as the environment's are); first
    end a line a killed writer left unfinished."""
    _end_unfinished_line(path)
    with EventLog(file=path, secrets=secrets) as log:
        for event in events:
            log(event)


def service_event(data: EventData, record: RunRecord) -> RunEvent:
    """``data`` as an event of the service run ``record``."""
    return RunEvent(data, record.id, record.name, record.mode or "gate", record.isolation)


class LogCursor:
    """Reads a log's complete lines from where it stopped last time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.lines = 0
        self.last_event: str | None = None
        """The event of the last complete line read (None before any)."""

    def read_new(self) -> list[LogLine]:
        """The complete lines written since the last call."""
        try:
            with self.path.open("rb") as file:
                file.seek(self.offset)
                data = file.read()
        except FileNotFoundError:
            return []
        end = data.rfind(b"\n")
        if end < 0:
            return []
        self.offset += end + 1
        found: list[LogLine] = []
        for raw in data[:end].split(b"\n"):
            self.lines += 1
            event = _event_of(raw)
            if event is not None:
                self.last_event = event
                found.append(LogLine(self.lines, event, raw.decode("utf-8", "replace")))
        return found


def last_event(path: Path, tail: int = 65536) -> str | None:
    """The event of the log's last complete line (None without one), read from its end: a
    restart looks at every run's log, and only the end tells whether it is done."""
    try:
        with path.open("rb") as file:
            size = file.seek(0, os.SEEK_END)
            file.seek(max(size - tail, 0))
            data = file.read()
    except FileNotFoundError:
        return None
    for raw in reversed(data[: data.rfind(b"\n") + 1].split(b"\n")):
        if (event := _event_of(raw)) is not None:
            return event
    return None


class Doorbell:
    """Wakes everyone waiting for news of a run; a waiter that took :meth:`waiter` before
    looking never misses a ring that came after."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def ring(self) -> None:
        """Something changed: wake every current waiter."""
        self._event.set()
        self._event = asyncio.Event()

    def waiter(self) -> asyncio.Event:
        """An event set at the next ring."""
        return self._event


def _event_of(raw: bytes) -> str | None:
    try:
        line = json.loads(raw)
    except ValueError:
        return None
    event = line.get("event") if isinstance(line, dict) else None
    return event if isinstance(event, str) and "\n" not in event and "\r" not in event else None


def _end_unfinished_line(path: Path) -> None:
    try:
        with path.open("rb") as file:
            file.seek(0, os.SEEK_END)
            if file.tell() == 0:
                return
            file.seek(-1, os.SEEK_END)
            if file.read(1) == b"\n":
                return
    except FileNotFoundError:
        return
    with path.open("ab") as file:
        file.write(b"\n")
