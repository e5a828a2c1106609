"""Reading a saved Claude Code transcript from its text, whatever shape it was kept in.

The shape is told by content, never by file name:

* **JSON lines**, one message a line: ``claude -p --output-format stream-json --verbose``
  (with or without partial messages and hook events), and Claude Code's own session logs
  (``~/.claude/projects/<project>/<session>.jsonl``), whose lines have no session-start
  message but carry the working directory (``cwd``) on every user and assistant line;
* a **JSON array** of the same messages, as claude-code-action keeps its execution file
  (pretty-printed) and ``claude -p --output-format json --verbose`` prints it.

The text is an array when its first non-blank character is ``[`` and the whole text is one
JSON array of objects; anything else, such as JSON lines whose first line is an array, is read
line by line, and lines are split at ``\\n`` only (a JSON string may hold U+2028 unescaped).
Arrays are decoded one element at a time, so only the text and the entries are held.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from phasegate.evidence.message_kinds import message_kind
from phasegate.evidence.stream_json import MessageReader
from phasegate.evidence.transcript import Entry, SessionStart, Transcript

TranscriptShape = Literal["json-lines", "json-array"]
"""How a saved transcript was kept: one message a line, or one JSON array of messages."""

EXAMPLE_LIMIT = 120
"""Characters of an unrecognised message kept as the example a warning shows."""

_DECODER = json.JSONDecoder()
_BLANK = re.compile(r"[ \t\n\r]*")
_JSON_ERRORS = (ValueError, RecursionError)  # ValueError: also over-long integer literals


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadStats:
    """What a reader made of a saved transcript, message by message."""

    shape: TranscriptShape
    understood: int
    """Messages evidence was read from: the session start, user and assistant turns, results."""
    ignored: int
    """Claude Code lines with nothing to judge: partial deltas, hook events, log bookkeeping."""
    unrecognised: int
    """Valid JSON that is not a Claude Code message."""
    not_json: int
    """Lines that are not JSON at all (JSON lines only)."""
    example: str | None = None
    """The first unrecognised message, shortened to :data:`EXAMPLE_LIMIT` characters."""
    example_at: int | None = None
    """Its line (JSON lines) or element (array) number, counted from 1."""

    @property
    def skipped(self) -> int:
        """Messages and lines left out of the transcript that were not known to be empty."""
        return self.unrecognised + self.not_json


@dataclass(frozen=True, slots=True)
class ParsedTranscript:
    """A transcript read from saved text, and how the text was read."""

    transcript: Transcript
    stats: ReadStats

    @property
    def skipped_lines(self) -> int:
        """Lines (or elements) that were neither JSON nor a Claude Code message."""
        return self.stats.skipped


def read_transcript_text(text: str) -> ParsedTranscript:
    """The transcript in ``text``: JSON lines, a session log, or a JSON array of messages."""
    text = text.removeprefix("\ufeff")
    start = _skip_blank(text, 0)
    if text.startswith("[", start):
        parsed = _read_array(text, start)
        if parsed is not None:
            return parsed
    return parse_stream_json(_lines(text))


def parse_stream_json(lines: Iterable[str]) -> ParsedTranscript:
    """Read JSON lines (blank lines ignored; bad and foreign lines counted, never raised)."""
    reader = _Reader("json-lines")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except _JSON_ERRORS:
            reader.not_json += 1
            continue
        reader.add(value, number, line, 0, len(line))
    return reader.done()


class _Reader:
    """Turns messages into entries and counts them; a session log's first ``cwd`` becomes
    the session start it lacks."""

    def __init__(self, shape: TranscriptShape) -> None:
        self.shape: TranscriptShape = shape
        self.entries: list[Entry] = []
        self.messages = MessageReader()
        self.started = False
        self.understood = self.ignored = self.unrecognised = self.not_json = 0
        self.example: str | None = None
        self.example_at: int | None = None

    def add(self, value: object, at: int, text: str, start: int, end: int) -> None:
        kind = message_kind(value)
        if kind == "ignored":
            self.ignored += 1
        elif kind == "unrecognised":
            self.unrecognised += 1
            if self.example is None:
                self.example, self.example_at = _shorten(text, start, end), at
        elif isinstance(value, Mapping):
            self.understood += 1
            entries = self.messages.entries(value)
            if not self.started:
                self.started = any(isinstance(e, SessionStart) for e in entries)
                if not self.started and (start_entry := _logged_start(value)) is not None:
                    self.entries.append(start_entry)
                    self.started = True
            self.entries.extend(entries)

    def done(self) -> ParsedTranscript:
        stats = ReadStats(
            shape=self.shape,
            understood=self.understood,
            ignored=self.ignored,
            unrecognised=self.unrecognised,
            not_json=self.not_json,
            example=self.example,
            example_at=self.example_at,
        )
        return ParsedTranscript(Transcript(entries=tuple(self.entries)), stats)


def _logged_start(message: Mapping[str, Any]) -> SessionStart | None:
    """The session start a session-log line implies: its ``cwd`` and ``sessionId``."""
    cwd = message.get("cwd")
    if message.get("type") not in ("user", "assistant") or not isinstance(cwd, str) or not cwd:
        return None
    session = message.get("sessionId")
    return SessionStart(cwd=cwd, session_id=session if isinstance(session, str) else None)


def _read_array(text: str, start: int) -> ParsedTranscript | None:
    """The messages of a text that is one JSON array of objects, or None when it is not."""
    reader = _Reader("json-array")
    position = _skip_blank(text, start + 1)
    number = 0
    while not (number == 0 and text.startswith("]", position)):
        try:
            value, end = _DECODER.raw_decode(text, position)
        except _JSON_ERRORS:
            return None
        if not isinstance(value, dict):
            return None
        number += 1
        reader.add(value, number, text, position, end)
        position = _skip_blank(text, end)
        if text.startswith(",", position):
            position = _skip_blank(text, position + 1)
        elif text.startswith("]", position):
            break
        else:
            return None
    return reader.done() if _skip_blank(text, position + 1) == len(text) else None


def _lines(text: str) -> Iterable[str]:
    """The lines of ``text`` split at ``\\n`` only, one at a time (no copy of the whole)."""
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        if end < 0:
            end = len(text)
        yield text[start:end]
        start = end + 1


def _skip_blank(text: str, position: int) -> int:
    blank = _BLANK.match(text, position)
    return blank.end() if blank is not None else position


def _shorten(text: str, start: int, end: int) -> str:
    """One line of at most :data:`EXAMPLE_LIMIT` characters from ``text[start:end]``."""
    words = " ".join(text[start : min(end, start + 4 * EXAMPLE_LIMIT)].split())
    return words if len(words) <= EXAMPLE_LIMIT else words[: EXAMPLE_LIMIT - 1] + "…"
