"""Reading a saved Claude Code transcript from its text, whatever shape it was kept in.

The shape is told by content, never by file name:

* **JSON lines**, one message a line: ``claude -p --output-format stream-json --verbose``
  (with or without partial messages and hook events), and Claude Code's own session logs
  (``~/.claude/projects/<project>/<session>.jsonl``), whose lines have no session-start
  message but carry the working directory (``cwd``) on every user and assistant line;
* a **JSON array** of the same messages, as claude-code-action keeps its execution file
  (pretty-printed) and ``claude -p --output-format json --verbose`` prints it;
* **JSON values one after another**, pretty-printed over several lines (a message or a
  run's result printed with indentation, ``jq .`` of a stream).

The text is an array when its first non-blank character is ``[`` and the whole text is one
JSON array of objects; anything else, such as JSON lines whose first line is an array, is read
line by line, and lines are split at ``\\n`` only (a JSON string may hold U+2028 unescaped).
A text that starts with ``{`` and has lines that are not JSON is read as values one after
another when the whole of it is that. Arrays and values are decoded one at a time, so only
the text and the entries are held.

A session log's subagents may also have files of their own (Claude Code 2.1 keeps them in
``<session>/subagents/agent-<id>.jsonl``): :func:`read_transcript_text` takes their texts
too and puts each subagent's entries where it ran, before the result of the Agent (Task)
call that started it; what a ``progress`` record already gave is read once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from phasegate.evidence.message_kinds import message_kind
from phasegate.evidence.stream_json import MessageReader
from phasegate.evidence.transcript import Entry, SessionStart, ToolResult, Transcript

TranscriptShape = Literal["json-lines", "json-array", "json-values"]
"""How a saved transcript was kept: one message a line, one JSON array of messages, or JSON
values one after another (pretty-printed)."""

EXAMPLE_LIMIT = 120
"""Characters of an unrecognised message kept as the example a warning shows."""

_DECODER = json.JSONDecoder()
_BLANK = re.compile(r"[ \t\n\r]*")
_JSON_ERRORS = (ValueError, RecursionError)  # ValueError: also over-long integer literals
_PYTHON_REPR = re.compile(
    r"\s*(?:SystemMessage|AssistantMessage|UserMessage|ResultMessage|StreamEvent|"
    r"TextBlock|ToolUseBlock|ToolResultBlock|ThinkingBlock)\("
)
"""A line claude-agent-sdk's message classes print as (their repr), which is not JSON."""


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
    results: int = 0
    """Run results (``type: result``) among the messages understood."""
    python_reprs: int = 0
    """Lines that are not JSON but Python reprs of claude-agent-sdk messages."""
    subagent_files: int = 0
    """Subagent files read beside a session log."""

    @property
    def results_only(self) -> bool:
        """Whether the messages understood are all run results: no conversation to judge."""
        return self.understood > 0 and self.understood == self.results

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


def read_transcript_text(text: str, *, subagents: Sequence[str] = ()) -> ParsedTranscript:
    """The transcript in ``text``: JSON lines, a session log, a JSON array of messages, or
    pretty-printed JSON values; ``subagents``: the texts of a session log's subagent files."""
    text = text.removeprefix("\ufeff")
    start = _skip_blank(text, 0)
    reader: _Reader | None = None
    if text.startswith("[", start):
        reader = _read_array(text, start)
    if reader is None and text.startswith("{", start) and not _is_json(_first_line(text, start)):
        # Pretty-printed: reading it line by line first would try (and fail) every line.
        reader = _read_values(text, start)
    if reader is None:
        reader = _read_lines(_lines(text))
        if reader.not_json and text.startswith("{", start):
            reader = _read_values(text, start) or reader
    for subagent in subagents:
        reader.add_subagent(subagent.removeprefix("\ufeff"))
    return reader.done()


def parse_stream_json(lines: Iterable[str]) -> ParsedTranscript:
    """Read JSON lines (blank lines ignored; bad and foreign lines counted, never raised)."""
    return _read_lines(lines).done()


def _read_lines(lines: Iterable[str], reader: _Reader | None = None) -> _Reader:
    reader = reader or _Reader("json-lines")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except _JSON_ERRORS:
            reader.not_json += 1
            reader.python_reprs += 1 if _PYTHON_REPR.match(line) else 0
            continue
        reader.add(value, number, line, 0, len(line))
    return reader


class _Reader:
    """Turns messages into entries and counts them; a session log's first ``cwd`` becomes
    the session start it lacks."""

    def __init__(self, shape: TranscriptShape) -> None:
        self.shape: TranscriptShape = shape
        self.entries: list[Entry] = []
        self.messages = MessageReader()
        self.started = False
        self.understood = self.ignored = self.unrecognised = self.not_json = 0
        self.results = self.python_reprs = self.subagent_files = 0
        self.example: str | None = None
        self.example_at: int | None = None
        self.subagent_entries: list[tuple[str | None, list[Entry]]] = []
        """Each subagent file's id (its lines' ``agentId``) and entries, placed when the
        reading is done."""
        self.agent_id: str | None = None
        """The ``agentId`` of the subagent file being read."""

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
            self.results += 1 if value.get("type") == "result" else 0
            if self.agent_id is None and isinstance(value.get("agentId"), str):
                self.agent_id = value["agentId"]
            entries = self.messages.entries(value)
            if not self.started:
                self.started = any(isinstance(e, SessionStart) for e in entries)
                if not self.started and (start_entry := _logged_start(value)) is not None:
                    self.entries.append(start_entry)
                    self.started = True
            self.entries.extend(entries)

    def add_subagent(self, text: str) -> None:
        """Read a subagent file's lines into entries of their own, counted with the rest."""
        main, self.entries = self.entries, []
        started, self.agent_id = self.started, None
        self.started = True  # a subagent's cwd is no session start
        _read_lines(_lines(text), self)
        self.subagent_entries.append((self.agent_id, self.entries))
        self.entries, self.started, self.agent_id = main, started, None
        self.subagent_files += 1

    def _placed(self) -> list[Entry]:
        """The entries with each subagent file's put before the result of the Agent (Task)
        call that started it (after everything when no result names it)."""
        if not self.subagent_entries:
            return self.entries
        before: dict[str, list[Entry]] = {}
        tail: list[Entry] = []
        for agent_id, entries in self.subagent_entries:
            parent = self.messages.started_by.get(agent_id) if agent_id is not None else None
            (before.setdefault(parent, []) if parent else tail).extend(entries)
        placed: list[Entry] = []
        for entry in self.entries:
            if isinstance(entry, ToolResult) and entry.tool_use_id in before:
                placed.extend(before.pop(entry.tool_use_id))
            placed.append(entry)
        for rest in before.values():
            placed.extend(rest)
        return [*placed, *tail]

    def done(self) -> ParsedTranscript:
        stats = ReadStats(
            shape=self.shape,
            understood=self.understood,
            ignored=self.ignored,
            unrecognised=self.unrecognised,
            not_json=self.not_json,
            example=self.example,
            example_at=self.example_at,
            results=self.results,
            python_reprs=self.python_reprs,
            subagent_files=self.subagent_files,
        )
        return ParsedTranscript(Transcript(entries=tuple(self._placed())), stats)


def _logged_start(message: Mapping[str, Any]) -> SessionStart | None:
    """The session start a session-log line implies: its ``cwd`` and ``sessionId``."""
    cwd = message.get("cwd")
    if message.get("type") not in ("user", "assistant") or not isinstance(cwd, str) or not cwd:
        return None
    session = message.get("sessionId")
    return SessionStart(cwd=cwd, session_id=session if isinstance(session, str) else None)


def _read_values(text: str, start: int) -> _Reader | None:
    """The messages of a text that is JSON objects one after another, or None when not."""
    reader = _Reader("json-values")
    position, number = start, 0
    while position < len(text):
        number += 1
        after = _add_object(reader, text, position, number)
        if after is None:
            return None
        position = after
    return reader


def _read_array(text: str, start: int) -> _Reader | None:
    """The messages of a text that is one JSON array of objects, or None when it is not."""
    reader = _Reader("json-array")
    position = _skip_blank(text, start + 1)
    number = 0
    while not (number == 0 and text.startswith("]", position)):
        number += 1
        after = _add_object(reader, text, position, number)
        if after is None:
            return None
        position = after
        if text.startswith(",", position):
            position = _skip_blank(text, position + 1)
        elif text.startswith("]", position):
            break
        else:
            return None
    return reader if _skip_blank(text, position + 1) == len(text) else None


def _add_object(reader: _Reader, text: str, position: int, number: int) -> int | None:
    """Read the JSON object at ``position`` as value ``number``: the position of what follows
    it, or None when no object stands there."""
    try:
        value, end = _DECODER.raw_decode(text, position)
    except _JSON_ERRORS:
        return None
    if not isinstance(value, dict):
        return None
    reader.add(value, number, text, position, end)
    return _skip_blank(text, end)


def _first_line(text: str, start: int) -> str:
    end = text.find("\n", start)
    return text[start : end if end >= 0 else len(text)]


def _is_json(line: str) -> bool:
    try:
        json.loads(line)
    except _JSON_ERRORS:
        return False
    return True


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
