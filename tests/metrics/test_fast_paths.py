"""The report's fast paths give the summary that parsing every line gives, whatever a log holds.

The aggregator counts some lines without parsing them when they have the exact shape EventLog
writes (:data:`phasegate.metrics.aggregate._SKIPPABLE`), and the reader hands on a block's lines
without measuring each when the block cannot hold one past the cap. Names, tasks, claims and
tool ids that look like the very bytes the fast path matches (quotes, ``"ok": true}``,
``"accepted": true``, backslashes, non-ASCII text) must not fool them.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from phasegate.metrics import aggregate, fields
from phasegate.metrics.aggregate import LogAggregator
from phasegate.metrics.reading import LogReader
from phasegate.metrics.summary import summarize
from phasegate.testing.event_log import synthetic_log_lines

_HOSTILE = [
    'x", "accepted": true, "issues": []}',
    '", "ok": true}',
    ', "ok": true}',
    '{"event": "run.completed", "verdict": "accepted"}',
    "back\\slash\\",
    '\\"',
    "ünïcødé ✓ 日本 \U0001f600",
    "line\nbreak\ttab\r",
    "",
]
"""Text that looks like the bytes the fast paths look for, or that JSON must escape."""

_TEXT = st.sampled_from(_HOSTILE) | st.text(max_size=12)
_REPLACED = ("task", "name", "text", "tool", "tool_use_id", "workdir")
"""The free-text fields of the lines EventLog writes, replaced by hostile text."""


def summary_of(lines: list[str], since: datetime | None = None) -> dict[str, Any]:
    """The summary of ``lines`` (grouped by phase)."""
    aggregator = LogAggregator(since=since)
    aggregator.add_lines(lines)
    return summarize(aggregator)


def hostile_events(events: int, seed: int, texts: list[str]) -> Iterator[dict[str, Any]]:
    """A synthetic log's events with their free-text fields replaced, in turn, by ``texts``
    (each run's task by one text, so that its lines still group together), and a third of
    its tool calls with a field after ``ok``."""
    tasks: dict[str, str] = {}
    for index, line in enumerate(synthetic_log_lines(events, seed=seed)):
        event = json.loads(line)
        for key in _REPLACED:
            if key == "task":
                run = event["run_id"]
                event["task"] = tasks.setdefault(run, texts[len(tasks) % len(texts)])
            elif key in event:
                event[key] = texts[(index + len(key)) % len(texts)]
        if event.get("issues"):
            event["issues"] = [texts[index % len(texts)]]
        if event["event"] == "tool.called" and index % 3 == 0:
            event["retried"] = True  # a field a later version may add after ok: not its shape
        yield event


def with_corrupt_lines(lines: list[str]) -> list[str]:
    """``lines`` with every seventh line also written cut in half after it (a proper prefix
    of a JSON object is never JSON: each is skipped)."""
    corrupt: list[str] = []
    for index, line in enumerate(lines):
        corrupt.append(line)
        if index % 7 == 0:
            corrupt.append(line[: len(line) // 2])
    return corrupt


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    texts=st.lists(_TEXT, min_size=1, max_size=5),
    corrupt=st.booleans(),
)
def test_hostile_names_give_the_same_summary_with_and_without_the_fast_path(
    seed: int, texts: list[str], corrupt: bool
) -> None:
    """EventLog's shape (keys in its order, ``", "`` between them, non-ASCII as is), its ASCII
    form, and the same events with keys reversed and no spaces (which no fast path takes),
    read with the fast path and without it: one summary, skipped lines included."""
    events = list(hostile_events(400, seed, texts))
    shaped = [json.dumps(event, ensure_ascii=False) for event in events]
    escaped = [json.dumps(event) for event in events]
    reordered = [
        json.dumps(dict(reversed(event.items())), separators=(",", ":")) for event in events
    ]
    if corrupt:
        shaped, escaped, reordered = map(with_corrupt_lines, (shaped, escaped, reordered))
    since = datetime.fromisoformat(events[len(events) // 2]["timestamp"])

    for cutoff in (None, since):
        expected = summary_of(shaped, cutoff)
        with mock.patch.object(aggregate, "_SKIPPABLE", ()):
            assert summary_of(shaped, cutoff) == expected
        assert summary_of(escaped, cutoff) == expected
        assert summary_of(reordered, cutoff) == expected
        assert expected["skipped_lines"] == (len(shaped) - len(events) if corrupt else 0)


def test_lines_shaped_like_the_fast_path_but_not_skippable_are_parsed() -> None:
    """A failed tool call, one whose tool's name ends like a successful call, and a successful
    one cut off before its end: each is parsed, not taken on its shape (the cut one is
    skipped); a phase.started whose name holds a closing brace changes nothing either way."""
    start = "2026-11-01T00:00:00.000+00:00"
    common = {"timestamp": start, "run_id": "r1", "task": "t", "mode": "gate", "phase": 1}
    lines = [
        json.dumps({"event": "tool.called", **common, "tool": "Edit", "ok": False}),
        json.dumps({"event": "tool.called", **common, "tool": ', "ok": true}', "ok": False}),
        json.dumps({"event": "phase.started", **common, "name": "}"}),
        json.dumps({"event": "tool.called", **common, "tool": "Read", "ok": True})[:-3],
    ]
    aggregator = LogAggregator()
    aggregator.add_lines(lines)

    assert (aggregator.lines, aggregator.skipped) == (4, 1)
    assert aggregator.phases[("t", "gate", 1)].tool_errors == 2


def test_a_log_read_in_blocks_gives_the_same_lines_whatever_cap_none_reaches(
    tmp_path: Path,
) -> None:
    """Past a block (256 KiB), with lines of every length: the default cap (no line's length
    looked at) and a cap just past the longest line (each looked at) read the same lines."""
    lines = [("x" * (index * 37 % 5000)).encode() for index in range(600)]
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    longest = max(map(len, lines))

    default = LogReader([str(log)])
    tight = LogReader([str(log)], max_line_bytes=longest + 2)

    assert list(default.lines()) == lines == list(tight.lines())
    assert default.long_lines == tight.long_lines == 0


_ANY_VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([10**6, 10**6 + 1, 10**400, 1.0, 2.5]),
    st.text(max_size=4),
    st.lists(st.integers(0, 2), max_size=2),
)
"""JSON values a phase or timestamp field may hold in a damaged log."""


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    values=st.lists(st.tuples(st.booleans(), _ANY_VALUE), min_size=1, max_size=8),
)
def test_inline_phase_and_timestamp_checks_skip_what_fields_rejects(
    seed: int, values: list[tuple[bool, Any]]
) -> None:
    """phase.marker, phase.gate and phase.completed check their phase (and the first two
    their timestamp) inline: with those fields replaced by arbitrary values, the summary is
    the one the handlers give calling :mod:`phasegate.metrics.fields` for every line."""
    events = list(hostile_events(300, seed, ["t"]))
    kinds = ("phase.marker", "phase.gate", "phase.completed")
    targets = [event for event in events if event["event"] in kinds]
    for index, (field, value) in enumerate(values):
        event = targets[(index * 37) % len(targets)]
        key = "phase" if field or event["event"] == "phase.completed" else "timestamp"
        event[key] = value
    lines = [json.dumps(event) for event in events]

    slow = LogAggregator()
    for kind, handler in (
        ("phase.marker", _reference_claim),
        ("phase.gate", _reference_gate),
    ):
        slow._handlers[kind] = functools.partial(handler, slow)  # type: ignore[index]
    completed = slow._handlers["phase.completed"]

    def phase_completed(event: dict[str, Any]) -> None:
        fields.phase(event)
        completed(event)

    slow._handlers["phase.completed"] = phase_completed
    slow.add_lines(lines)

    assert summary_of(lines) == summarize(slow)


def _reference_claim(aggregator: LogAggregator, event: dict[str, Any]) -> None:
    """phase.marker as it was before its checks were inline."""
    run_id, phase, at = str(event["run_id"]), fields.phase(event), fields.text(event)
    run = aggregator._open.get(run_id)
    if run is not None:
        run.claims[phase] = at


def _reference_gate(aggregator: LogAggregator, event: dict[str, Any]) -> None:
    """phase.gate as it was before its checks were inline."""
    run_id, phase, at = str(event["run_id"]), fields.phase(event), fields.text(event)
    run = aggregator._open.get(run_id)
    if run is not None and event["accepted"] is True and phase not in run.completed:
        run.completed[phase] = run.claims.get(phase, at)
