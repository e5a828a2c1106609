"""Reading log lines from files (plain or gzip) and standard input, one line at a time.

Lines are handed on as bytes, never all at once: a report over a log of any size needs
memory for one line, not for the file.
"""

from __future__ import annotations

import gzip
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from phasegate.errors import UsageError

STDIN = "-"
_GZIP_MAGIC = b"\x1f\x8b"


def log_lines(sources: list[str]) -> Iterator[bytes]:
    """Every line of every source, in order. ``-`` is standard input; a file starting with
    the gzip signature is decompressed on the fly, whatever its name."""
    for source in sources or [STDIN]:
        if source == STDIN:
            yield from sys.stdin.buffer
            continue
        path = Path(source)
        try:
            with path.open("rb") as handle:
                if handle.peek(2)[:2] == _GZIP_MAGIC:
                    yield from _gzip_lines(handle)
                else:
                    yield from handle
        except OSError as exc:
            raise UsageError(f"cannot read log {path}: {exc.strerror or exc}") from None


def _gzip_lines(handle: BinaryIO) -> Iterator[bytes]:
    try:
        with gzip.GzipFile(fileobj=handle, mode="rb") as unpacked:
            yield from unpacked
    except (EOFError, gzip.BadGzipFile):
        # A truncated .gz (a log still being written, a cut-off upload): what was read counts.
        return
