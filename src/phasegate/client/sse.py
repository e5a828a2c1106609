"""An incremental Server-Sent Events parser: chunks of a stream in, whole events out.

The format: lines end with CRLF, LF or CR (a
chunk may end between the CR and the LF); ``data`` lines accumulate, joined with newlines;
``event`` names the event (``message`` when absent); ``id`` sets the last event id, which
later events keep until another ``id`` line; ``retry`` (digits only) sets the reconnection
delay; lines starting with a colon are comments (keep-alive pings); unknown fields are
ignored; a block with no ``data`` line dispatches nothing; a leading byte-order mark is
dropped. Bytes are decoded as UTF-8 across chunk boundaries, invalid bytes replaced.
It does no I/O, so any transport can feed it, and it holds at most ``max_event_size``
characters of one event, so a hostile stream cannot make it grow without bound.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from phasegate.client.errors import ServiceError

MAX_EVENT_SIZE = 16 * 1024 * 1024
"""Characters one event (its pending line plus its data) may hold by default."""

_LINE_END = re.compile(r"\r\n|\r|\n")
_MAX_RETRY_DIGITS = 10
"""A longer ``retry`` value (over three months in milliseconds) is ignored as nonsense."""


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched event: its ``event`` name, ``data`` (lines joined with ``\\n``) and the
    last event id when it was dispatched (``""`` when the stream never set one)."""

    event: str
    data: str
    id: str = ""


class SSEParser:
    """Feed it the chunks of one event stream, in order; each ``feed`` returns the events
    completed by that chunk. ``retry`` is the last reconnection delay the stream asked for,
    in milliseconds (None until it asks); ``last_event_id`` the id a reconnect should send."""

    def __init__(self, *, max_event_size: int = MAX_EVENT_SIZE) -> None:
        self.max_event_size = max_event_size
        self.retry: int | None = None
        self.last_event_id = ""
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._started = False
        self._after_cr = False
        self._partial: list[str] = []
        self._partial_size = 0
        self._data: list[str] = []
        self._data_size = 0
        self._event_type = ""
        self._id = ""

    def feed(self, chunk: bytes | str) -> list[SSEEvent]:
        """The events that ``chunk`` completes.

        Raises :class:`ServiceError` (code ``event_too_large``) when one event passes
        ``max_event_size`` characters.
        """
        text = self._decoder.decode(chunk) if isinstance(chunk, bytes) else chunk
        if not text:
            return []
        if not self._started:
            self._started = True
            text = text.removeprefix("\ufeff")
        if self._after_cr and text.startswith("\n"):
            text = text[1:]  # the LF of a CRLF split between two chunks
        self._after_cr = False
        events: list[SSEEvent] = []
        start = 0
        for end in _LINE_END.finditer(text):
            self._partial.append(text[start : end.start()])
            line = "".join(self._partial)
            self._partial.clear()
            self._partial_size = 0
            start = end.end()
            self._after_cr = end.group() == "\r" and start == len(text)
            event = self._line(line)
            if event is not None:
                events.append(event)
        if start < len(text):
            self._partial.append(text[start:])
            self._partial_size += len(text) - start
            self._check_size()
        return events

    def _line(self, line: str) -> SSEEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None  # a comment: keep-alive pings
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
            self._data_size += len(value) + 1
            self._check_size()
        elif name == "event":
            self._event_type = value
        elif name == "id" and "\0" not in value:
            self._id = value
        elif name == "retry" and _is_delay(value):
            self.retry = int(value)
        return None

    def _dispatch(self) -> SSEEvent | None:
        self.last_event_id = self._id
        if not self._data:
            self._event_type = ""
            return None
        event = SSEEvent(
            event=self._event_type or "message", data="\n".join(self._data), id=self._id
        )
        self._data.clear()
        self._data_size = 0
        self._event_type = ""
        return event

    def _check_size(self) -> None:
        if self._partial_size + self._data_size > self.max_event_size:
            raise ServiceError(
                f"an event of the stream passes {self.max_event_size} characters",
                status_code=None,
                code="event_too_large",
                advice="the stream is not one the service writes; check the base URL",
            )


def _is_delay(value: str) -> bool:
    """Digits only, and not so many that the value is nonsense (it is then ignored)."""
    return value.isascii() and value.isdigit() and len(value) <= _MAX_RETRY_DIGITS
