"""Reading log lines (phasegate.metrics.reading): gzip, damaged streams, capped lines."""

from __future__ import annotations

import gzip
import json
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from phasegate.errors import PhasegateError, UsageError
from phasegate.metrics import reading
from phasegate.metrics.aggregate import LogAggregator
from phasegate.metrics.reading import SKIPPED_LINE, LogReader
from phasegate.metrics.render import render_json, render_markdown
from phasegate.metrics.summary import summarize
from tests.helpers.fuzz import bounded_memory, hostile_text
from tests.helpers.logs import three_runs

LINES = [line.encode() for line in three_runs().lines]
LOG = b"".join(line + b"\n" for line in LINES)
HUGE = 32 << 20
"""The length of a line too long to hold (for the memory tests; small enough to be quick)."""


def read(*paths: Path, max_line_bytes: int | None = None) -> tuple[list[bytes], LogReader]:
    """Every line ``LogReader`` hands on for ``paths``, and the reader afterwards."""
    options = {} if max_line_bytes is None else {"max_line_bytes": max_line_bytes}
    reader = LogReader([str(path) for path in paths], **options)
    return list(reader.lines()), reader


def test_plain_and_gzip_files_give_the_same_lines_with_no_warning(tmp_path: Path) -> None:
    """A gzip file is recognised by its signature, whatever its name."""
    plain, packed = tmp_path / "runs.jsonl", tmp_path / "runs.jsonl.old"
    plain.write_bytes(LOG)
    packed.write_bytes(gzip.compress(LOG))

    lines, reader = read(plain, packed)

    assert lines == LINES + LINES
    assert reader.warnings == [] and reader.long_lines == 0


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda packed: packed[: len(packed) // 2], "ended before the end-of-stream marker"),
        (lambda packed: b"\x1f\x8b" + b"garbage" * 20, "Unknown compression method"),
        (lambda packed: packed[:10] + b"\xff" * 64, "invalid block type"),
        (lambda packed: packed[:-8] + b"\0" * 8, "CRC check failed"),
        (lambda packed: packed + b"trailing garbage", "Not a gzipped file"),
    ],
    ids=["truncated", "garbage-header", "garbage-data", "bad-crc", "trailing-garbage"],
)
def test_a_damaged_gzip_stream_is_a_warning_naming_the_file(
    tmp_path: Path, damage: object, reason: str
) -> None:
    """Cut off, garbage after the signature, a bad checksum or garbage after the stream: the
    lines before the damage count, and a warning says the file is damaged."""
    path = tmp_path / "runs.jsonl.gz"
    path.write_bytes(damage(gzip.compress(LOG)))  # type: ignore[operator]

    lines, reader = read(path)

    (warning,) = reader.warnings
    assert warning.startswith(f"{path}: damaged gzip stream (")
    assert reason in warning
    assert lines[:-1] == LINES[: max(len(lines) - 1, 0)]


def test_a_damaged_stream_is_reported_through_the_summary(tmp_path: Path) -> None:
    """The aggregate of a damaged log still counts the lines read before the damage."""
    path = tmp_path / "runs.jsonl.gz"
    path.write_bytes(gzip.compress(LOG)[:-20])
    reader = LogReader([str(path)])
    aggregator = LogAggregator()

    aggregator.add_lines(reader.lines())

    assert aggregator.lines > 0 and len(reader.warnings) == 1


def test_a_line_past_the_cap_is_handed_on_as_a_skipped_line(tmp_path: Path) -> None:
    """The lines around a too-long line are read whole; it becomes one corrupt line."""
    path = tmp_path / "runs.jsonl"
    path.write_bytes(LINES[0] + b'\n{"event": "' + b"x" * 5000 + b'"}\n' + LINES[1])

    lines, reader = read(path, max_line_bytes=1024)

    assert lines == [LINES[0], SKIPPED_LINE, LINES[1]]
    assert reader.long_lines == 1
    aggregator = LogAggregator()
    aggregator.add_lines(lines)
    assert (aggregator.lines, aggregator.skipped) == (3, 1)


def test_a_line_of_exactly_the_cap_is_read_and_one_byte_more_is_skipped(tmp_path: Path) -> None:
    """The cap counts the newline: 1024 bytes in all is a line, 1025 is not."""
    path = tmp_path / "runs.jsonl"
    path.write_bytes(b"a" * 1023 + b"\n" + b"b" * 1024 + b"\n" + b"c" * 1024)

    lines, _ = read(path, max_line_bytes=1024)

    assert lines == [b"a" * 1023, SKIPPED_LINE, SKIPPED_LINE]


def test_a_huge_line_in_a_plain_file_is_skipped_in_small_memory(tmp_path: Path) -> None:
    """A line of 32 MiB (a sparse file: no disk needed) is read past in chunks, in a quarter
    of its size; reading it whole would take all of it."""
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as handle:
        handle.write(LINES[0] + b"\n")
        handle.truncate(HUGE)  # zeros, no newline: one line to the end

    with bounded_memory(HUGE // 4):
        lines, reader = read(path)

    assert lines == [LINES[0], SKIPPED_LINE] and reader.long_lines == 1


def test_a_gzip_bomb_of_one_line_is_skipped_in_small_memory(tmp_path: Path) -> None:
    """A line of 32 MiB compressed to a few dozen KiB is never held in memory."""
    path = tmp_path / "bomb.jsonl.gz"
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: a gzip wrapper
    with path.open("wb") as handle:
        handle.write(compressor.compress(LINES[0] + b"\n"))
        block = b"x" * (1 << 20)
        for _ in range(HUGE >> 20):
            handle.write(compressor.compress(block))
        handle.write(compressor.compress(b"\n" + LINES[1]) + compressor.flush())
    assert path.stat().st_size < 1 << 20

    with bounded_memory(HUGE // 4):
        lines, reader = read(path)

    assert lines == [LINES[0], SKIPPED_LINE, LINES[1]]
    assert reader.warnings == []


def test_a_file_that_cannot_be_read_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    """A missing file or a directory: exit 2 with the path, not a traceback."""
    with pytest.raises(UsageError, match=r"cannot read log .*missing\.jsonl"):
        read(tmp_path / "missing.jsonl")
    with pytest.raises(UsageError, match=f"cannot read log {re.escape(str(tmp_path))}"):
        read(tmp_path)


# -- fuzzing -------------------------------------------------------------------------------
_RUN_END = next(json.loads(line) for line in three_runs().lines if "run.completed" in line)
_IMPOSSIBLE = st.sampled_from(["-1", "1e999", "-1e999", "NaN", "9" * 400, '"7"', "[]", "1e13"])
_CAP = 1024
"""A small line cap for the fuzz tests, so lines past it are common."""


def _line(kind: str, value: str = "", filler: int = 0) -> bytes:
    """A log line of a known fate: ``ok`` counts, ``corrupt`` and ``long`` are skipped."""
    if kind == "ok":
        return json.dumps(_RUN_END).encode() + b"\n"
    if kind == "long":
        return b'{"event": "run.completed", "x": "' + b"x" * (_CAP + filler) + b'"}\n'
    event = json.dumps({**_RUN_END, "duration_ms": "@"}).replace('"@"', value)
    return event.encode() + b"\n"


_KNOWN_LINES = st.lists(
    st.one_of(
        st.just(("ok", _line("ok"))),
        _IMPOSSIBLE.map(lambda value: ("corrupt", _line("corrupt", value))),
        st.integers(0, 300).map(lambda filler: ("long", _line("long", filler=filler))),
        st.sampled_from([b"\n", b"  \n", b"\t\r\n"]).map(lambda blank: ("blank", blank)),
    ),
    max_size=20,
)
"""Lines whose fate is known, so the counts can be checked exactly."""


def _aggregate(path: Path) -> tuple[LogReader, LogAggregator, int]:
    """Read ``path`` into an aggregator and a summary; also count the non-blank lines the
    reader handed on."""
    reader = LogReader([str(path)], max_line_bytes=_CAP)
    aggregator = LogAggregator()
    handed: list[int] = []

    def counted() -> Iterator[bytes]:
        for line in reader.lines():
            handed.append(bool(line.strip()))
            yield line

    aggregator.add_lines(counted())
    summary = summarize(aggregator)
    render_json(summary)
    render_markdown(summary)
    return reader, aggregator, sum(handed)


@pytest.mark.fuzz
@given(lines=_KNOWN_LINES, packed=st.booleans())
def test_every_line_read_is_either_counted_or_skipped(
    tmp_path_factory: pytest.TempPathFactory, lines: list[tuple[str, bytes]], packed: bool
) -> None:
    """Plain or gzip: good lines count, impossible values and lines past the cap are
    skipped, blank lines are neither; lines read = counted + skipped, in bounded memory."""
    path = tmp_path_factory.mktemp("fuzz") / "runs.jsonl"
    data = b"".join(line for _, line in lines)
    path.write_bytes(gzip.compress(data) if packed else data)

    with bounded_memory():
        reader, aggregator, read_lines = _aggregate(path)

    fates = [kind for kind, _ in lines]
    skipped = fates.count("corrupt") + fates.count("long")
    assert (aggregator.lines, aggregator.skipped) == (fates.count("ok") + skipped, skipped)
    assert read_lines == aggregator.lines
    assert reader.long_lines == fates.count("long") and reader.warnings == []


@pytest.mark.fuzz
@given(
    data=st.one_of(
        st.binary(max_size=2000),
        st.lists(hostile_text, max_size=20).map(lambda texts: "\n".join(texts).encode()),
        _KNOWN_LINES.map(lambda lines: b"".join(line for _, line in lines)),
    ),
    packing=st.sampled_from(["plain", "gzip", "truncated gzip", "damaged gzip", "gzip magic"]),
    cut=st.integers(0, 10_000),
)
def test_any_bytes_plain_or_gzip_damaged_or_not_read_without_a_foreign_error(
    tmp_path_factory: pytest.TempPathFactory, data: bytes, packing: str, cut: int
) -> None:
    """Arbitrary bytes, hostile text or log lines, plain, gzip, cut-off gzip, gzip with a
    byte changed, or the gzip signature before anything: only phasegate's errors may
    escape, memory stays bounded, and the counts add up."""
    packed = gzip.compress(data)
    content = {
        "plain": data,
        "gzip": packed,
        "truncated gzip": packed[: cut % (len(packed) + 1)],
        "damaged gzip": _flip(packed, cut),
        "gzip magic": b"\x1f\x8b" + data,
    }[packing]
    path = tmp_path_factory.mktemp("fuzz") / "runs.jsonl"
    path.write_bytes(content)

    with bounded_memory():
        try:
            reader, aggregator, read_lines = _aggregate(path)
        except PhasegateError:
            return

    assert 0 <= aggregator.skipped <= aggregator.lines == read_lines
    assert reader.long_lines <= aggregator.skipped
    if packing == "gzip":
        assert reader.warnings == []


@pytest.mark.fuzz
@given(
    pieces=st.lists(st.binary(max_size=40).map(lambda raw: raw.replace(b"\n", b"")), max_size=12),
    ends_with_newline=st.booleans(),
    cap=st.integers(1, 50),
    block=st.integers(1, 64),
    packed=st.booleans(),
)
def test_lines_split_a_block_at_a_time_are_the_lines_of_the_file(
    tmp_path_factory: pytest.TempPathFactory,
    pieces: list[bytes],
    ends_with_newline: bool,
    cap: int,
    block: int,
    packed: bool,
) -> None:
    """Whatever the block size, lines that cross blocks come out whole, and exactly the
    lines of ``cap`` bytes or more (counting their newline) are skipped."""
    data = b"\n".join(pieces) + (b"\n" if ends_with_newline and pieces else b"")
    assume(packed or not data.startswith(b"\x1f\x8b"))  # plain data that reads as gzip
    path = tmp_path_factory.mktemp("fuzz") / "runs.jsonl"
    path.write_bytes(gzip.compress(data) if packed else data)
    ended = data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n")
    expected = [line if len(line) < cap else SKIPPED_LINE for line in ended if data]
    too_long = sum(len(line) >= cap for line in ended if data)

    with patch.object(reading, "_BLOCK", block):
        lines, reader = read(path, max_line_bytes=cap)

    assert lines == expected
    assert reader.long_lines == too_long


def _flip(data: bytes, at: int) -> bytes:
    """``data`` with the byte at ``at`` (modulo its length) inverted."""
    at %= len(data)
    return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :]
