"""A run's event log as the service reads and extends it.

The run's own process appends its events; the service appends ``run.queued`` before that
process starts and its closing events after it ended, so the two never write at once. Both
write whole lines, each with a single ``write`` to an ``O_APPEND`` descriptor, so a reader
never sees half a line unless a writer died in the middle of one: such a tail is skipped
until a newline completes it, and a line that is not JSON is skipped (its number still
counts, so event ids stay line numbers). The log is never opened through a symbolic link,
and read only while it is a regular file.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
from dataclasses import dataclass
from pathlib import Path

from phasegate._files.confined import open_appending
from phasegate._files.limits import open_regular
from phasegate._server.records import RunRecord
from phasegate.telemetry.events import EventData, RunEvent
from phasegate.telemetry.log import EventLog


@dataclass(frozen=True, slots=True)
class LogLine:
    """One line of a run's log: its number (the event id), its event name, its text."""

    number: int
    event: str
    text: str


def event_lines(events: list[RunEvent], secrets: tuple[str, ...] = ()) -> list[str]:
    """``events`` as the log's lines (``secrets`` hidden, as the environment's are)."""
    text = io.StringIO()
    with EventLog(stream=text, secrets=secrets) as log:
        for event in events:
            log(event)
    return text.getvalue().splitlines()


def append_lines(path: Path, lines: list[str]) -> None:
    """Append ``lines`` to the log, one ``write`` each; first end a line a killed writer left
    unfinished. Raises OSError (a full disk) and LinkedPathError (a link in the log's place)."""
    descriptor = open_appending(path, 0o600)
    try:
        if _unfinished(path):
            os.write(descriptor, b"\n")
        for line in lines:
            data = (line + "\n").encode("utf-8")
            while data:
                data = data[os.write(descriptor, data) :]
    finally:
        os.close(descriptor)


def service_event(data: EventData, record: RunRecord) -> RunEvent:
    """``data`` as an event of the service run ``record``."""
    return RunEvent(data, record.id, record.name, record.mode or "gate", record.isolation)


def log_line(number: int, text: str) -> LogLine | None:
    """``text`` as the log line ``number`` (None when it is no event)."""
    event = _event_of(text.encode("utf-8"))
    return LogLine(number, event, text) if event is not None else None


class LogCursor:
    """Reads a log's complete lines from where it stopped last time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.lines = 0
        self.last_event: str | None = None
        """The event of the last complete line read (None before any)."""
        self.broken = False
        """Whether the log could not be read (not a regular file, unreadable)."""

    def read_new(self) -> list[LogLine]:
        """The complete lines written since the last call."""
        try:
            with open_regular(self.path, follow_links=False) as file:
                file.seek(self.offset)
                data = file.read()
        except FileNotFoundError:
            return []
        except OSError:  # not a regular file, unreadable: nothing to read from it, ever
            self.broken = True
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
    events = tail_events(path, tail)
    event = events[-1].get("event") if events else None
    return event if isinstance(event, str) else None


def tail_events(path: Path, tail: int = 65536) -> list[dict[str, object]]:
    """The events of the complete lines in the log's last ``tail`` bytes, in order (a
    missing log, or one that is not a regular file, has none)."""
    try:
        with open_regular(path, follow_links=False) as file:
            size = file.seek(0, os.SEEK_END)
            file.seek(max(size - tail, 0))
            data = file.read()
    except OSError:
        return []
    found: list[dict[str, object]] = []
    for raw in data[: data.rfind(b"\n") + 1].split(b"\n"):
        if _event_of(raw) is not None:
            found.append(json.loads(raw))
    return found


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


def _unfinished(path: Path) -> bool:
    """Whether the log ends in the middle of a line."""
    try:
        with open_regular(path, follow_links=False) as file:
            if file.seek(0, os.SEEK_END) == 0:
                return False
            file.seek(-1, os.SEEK_END)
            return file.read(1) != b"\n"
    except OSError:
        return False
