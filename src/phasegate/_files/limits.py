"""phasegate's limits on the files it reads, and the error that says one was passed.

- a file may hold at most :data:`MAX_FILE_BYTES` bytes;
- values may nest at most :data:`MAX_DEPTH` levels deep;
- a document may hold at most :data:`MAX_NODES` values, counted with every YAML alias
  expanded (a few lines of aliases can otherwise stand for billions of values);
- a key may appear only once in a mapping (YAML and JSON would silently keep the last).
"""

from __future__ import annotations

from typing import BinaryIO, Protocol

MAX_FILE_BYTES = 2 * 1024 * 1024
"""The largest file phasegate reads: 2 MiB."""
MAX_DEPTH = 64
"""How deep values may nest (a mapping in a list in a mapping is three levels)."""
MAX_NODES = 100_000
"""How many values one document may hold, YAML aliases expanded (a task of 10,000 phases
holds about 70,000; PyYAML spends about 600 bytes on each while it reads)."""

_CHUNK_BYTES = 1024 * 1024


def read_at_most(file: BinaryIO, limit: int) -> bytearray | None:
    """The rest of ``file``, or None when it holds more than ``limit`` bytes. Read in chunks:
    one ``read(limit + 1)`` would set aside the whole limit even for a small file."""
    data = bytearray()
    while chunk := file.read(_CHUNK_BYTES):
        data += chunk
        if len(data) > limit:
            return None
    return data


class Mark(Protocol):
    """Where in the text something starts (0-based line and column)."""

    line: int
    column: int


class ParseProblem(ValueError):
    """What is wrong with a file's contents, in words; the caller names the file."""


def too_deep(mark: Mark | None = None) -> str:
    """The problem of nesting past MAX_DEPTH (at ``mark`` when known)."""
    where = f" ({where_is(mark)})" if mark is not None else ""
    return f"values nest more than {MAX_DEPTH} levels deep{where}; flatten the file"


def too_many(mark: Mark | None = None) -> str:
    """The problem of holding more than MAX_NODES values (counted up to ``mark``)."""
    where = f" (counted up to {where_is(mark)}, aliases expanded)" if mark is not None else ""
    return f"holds more than {MAX_NODES} values{where}; shorten the file"


def where_is(mark: Mark) -> str:
    """``line L, column C``, 1-based."""
    return f"line {mark.line + 1}, column {mark.column + 1}"
