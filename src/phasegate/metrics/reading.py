"""Reading log lines from files (plain or gzip) and standard input, one line at a time.

Lines are handed on as bytes, never all at once, and never longer than
:data:`MAX_LINE_BYTES`: a report over a log of any size, or with a line of any length, needs
memory for one capped line, not for the file. A longer line is read past in chunks and handed
on as :data:`SKIPPED_LINE`, which no JSON parser accepts, so the aggregator counts it as a
corrupt line. A damaged gzip stream (cut off, or garbage after the signature) ends that
source: the lines read before the damage count, and :attr:`LogReader.warnings` says so.
"""

from __future__ import annotations

import gzip
import sys
import zlib
from collections.abc import Iterator, Sequence
from io import BufferedReader, RawIOBase
from itertools import chain
from pathlib import Path
from typing import Protocol, cast

from phasegate.errors import UsageError
from phasegate.metrics.formatting import quantity

STDIN = "-"
MAX_LINE_BYTES = 1 << 20
"""The longest line read (1 MiB, its newline included); a longer one is skipped as corrupt."""
SKIPPED_LINE = b"\xff line longer than the cap, skipped"
"""What a line past the cap is handed on as: bytes that are not JSON (``0xff`` is not UTF-8)."""
_GZIP_MAGIC = b"\x1f\x8b"
_BLOCK = 256 * 1024


class _Blocks(Protocol):
    def read1(self, size: int = -1, /) -> bytes: ...


class _Source(_Blocks, Protocol):
    def peek(self, size: int = 0, /) -> bytes: ...
    def read(self, size: int = -1, /) -> bytes: ...
    def seek(self, offset: int, /) -> object: ...


class LogReader:
    """The lines of ``sources`` (paths, or ``-`` for standard input; none means stdin).

    A source starting with the gzip signature (standard input too) is decompressed on the
    fly, whatever its name. Lines are handed on without their newline. Iterate :meth:`lines`
    once; afterwards :attr:`warnings` holds one sentence per damaged source and
    :attr:`long_lines` counts the lines skipped for passing ``max_line_bytes``.
    """

    def __init__(self, sources: Sequence[str], *, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self.sources = list(sources) or [STDIN]
        self.max_line_bytes = max_line_bytes
        self.warnings: list[str] = []
        """What went wrong in a source that did not stop the report, one sentence each."""
        self.long_lines = 0
        """Lines skipped because they passed ``max_line_bytes``."""
        self._handed = 0

    def lines(self) -> Iterator[bytes]:
        """Every line of every source, in order (see the module docstring for the caps).

        Raises :class:`~phasegate.errors.UsageError` when a source cannot be read.
        """
        # A block's lines at a time, flattened by chain in C: a generator resumed for every
        # line cost as much again as splitting the file into lines.
        return chain.from_iterable(self._blocks())

    def _blocks(self) -> Iterator[list[bytes]]:
        for source in self.sources:
            if source == STDIN:
                yield from self._source("standard input", _stdin())
                continue
            path = Path(source)
            try:
                with path.open("rb") as handle:
                    yield from self._source(str(path), handle)
            except OSError as exc:
                raise UsageError(f"cannot read log {path}: {exc.strerror or exc}") from None

    def _source(self, name: str, handle: _Source) -> Iterator[list[bytes]]:
        if handle.peek(2)[:2] == _GZIP_MAGIC:
            return self._unpacked(name, handle)
        return self._capped(handle)

    def _unpacked(self, name: str, handle: _Source) -> Iterator[list[bytes]]:
        before = self._handed
        try:
            with gzip.GzipFile(fileobj=handle, mode="rb") as unpacked:
                yield from self._capped(unpacked)
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            # A log still being written, a cut-off upload, or not gzip after all: what was
            # read counts, and the report says the rest is missing.
            read = quantity(self._handed - before, "line")
            self.warnings.append(f"{name}: damaged gzip stream ({exc}); read {read} before it")

    def _capped(self, handle: _Blocks) -> Iterator[list[bytes]]:
        """The lines of ``handle``, a block's worth at a time (so the loop per line runs in C),
        with those past the cap replaced by :data:`SKIPPED_LINE`."""
        limit = self.max_line_bytes
        pending, too_long = b"", False  # the line the last block ended inside
        while block := handle.read1(_BLOCK):
            lines = block.split(b"\n")
            rest = lines.pop()
            if lines:
                # No line can reach the cap when the block and what it continues do not: the
                # usual case, which needs no look at each line's length.
                longest = len(pending) + len(block)
                lines[0] = b"" if too_long else pending + lines[0]
                if too_long or (longest >= limit and max(map(len, lines)) >= limit):
                    lines = self._skip_long(lines, first=too_long)
                pending, too_long = b"", False
                self._handed += len(lines)
                yield lines
            if not too_long:
                pending += rest
                too_long = len(pending) >= limit
                pending = b"" if too_long else pending
        if too_long or pending:
            self._handed += 1
            yield self._skip_long([pending], first=too_long)

    def _skip_long(self, lines: list[bytes], *, first: bool) -> list[bytes]:
        """``lines`` with each one past the cap (and the first, if ``first``) skipped."""
        limit, kept = self.max_line_bytes, []
        for index, line in enumerate(lines):
            if len(line) >= limit or (first and index == 0):
                self.long_lines += 1
                line = SKIPPED_LINE
            kept.append(line)
        return kept


def _stdin() -> _Source:
    """Standard input as a buffered stream (it is one, unless something replaced it)."""
    stdin = sys.stdin.buffer
    return stdin if isinstance(stdin, BufferedReader) else BufferedReader(cast(RawIOBase, stdin))
