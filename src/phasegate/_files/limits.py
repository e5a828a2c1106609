"""phasegate's limits on the files it reads, the one bounded reader, and the errors that say
a limit was passed.

Every file a user, an agent or an artifact could have planted is read through
:func:`open_regular` or :func:`read_bounded`:

- it must be a regular file: a FIFO, a directory, a device or a socket is refused without
  waiting (opened with ``O_NONBLOCK``, then checked with ``fstat`` on the open descriptor, so
  what is checked is what is read), and with ``follow_links=False`` a symbolic link too;
- a file may hold at most :data:`MAX_FILE_BYTES` bytes (some readers set their own bound);
- values may nest at most :data:`MAX_DEPTH` levels deep;
- a document may hold at most :data:`MAX_NODES` values, counted with every YAML alias
  expanded (a few lines of aliases can otherwise stand for billions of values);
- a key may appear only once in a mapping (YAML and JSON would silently keep the last).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, Protocol

from phasegate._files.portable import BINARY, CLOEXEC, NOFOLLOW, NONBLOCK

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


class ParseProblem(ValueError):
    """What is wrong with a file's contents, in words; the caller names the file."""


class NotRegularFileError(OSError):
    """A file phasegate was to read is not a regular file: ``strerror`` says what it is (a
    FIFO, a directory, a device, a socket, a symbolic link where links are not followed)
    and ``filename`` names it."""


class FileTooLargeError(ParseProblem):
    """A file holds more than the bound its reader sets (``limit``, in bytes); the message
    says so, and the caller names the file."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"is larger than {describe_bytes(limit)}, the most phasegate reads; split it "
            "or shorten it"
        )
        self.limit = limit


@contextlib.contextmanager
def open_regular(path: Path | str, *, follow_links: bool = True) -> Iterator[BinaryIO]:
    """``path`` open for reading in binary, when it is a regular file.

    Opening never waits (``O_NONBLOCK``: a FIFO with no writer opens at once), and the
    descriptor's own ``fstat`` decides, so nothing swapped in between is read. With
    ``follow_links=False`` a symbolic link in the last component is refused
    (``O_NOFOLLOW``). Raises :class:`NotRegularFileError` naming the file and what it is,
    and the usual :class:`OSError` (missing, unreadable).
    """
    flags = os.O_RDONLY | NONBLOCK | CLOEXEC | BINARY | (0 if follow_links else NOFOLLOW)
    if not follow_links and not NOFOLLOW and os.path.islink(path):  # no O_NOFOLLOW (Windows)
        raise NotRegularFileError(
            errno.ELOOP, "is a symbolic link, which phasegate does not follow here", str(path)
        )
    try:
        descriptor = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_links and os.path.islink(path):
            raise NotRegularFileError(
                errno.ELOOP, "is a symbolic link, which phasegate does not follow here", str(path)
            ) from None
        raise
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(
                errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL,
                f"is {file_kind(mode)}, not a regular file",
                str(path),
            )
        if NONBLOCK:
            os.set_blocking(descriptor, True)  # a regular file: reads behave as usual
        file = os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise
    with file:
        yield file


def read_bounded(
    path: Path | str, limit: int = MAX_FILE_BYTES, *, follow_links: bool = True
) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Raises :class:`NotRegularFileError` and :class:`OSError` as :func:`open_regular` does,
    and :class:`FileTooLargeError` for a file larger than ``limit`` (never read past it).
    """
    with open_regular(path, follow_links=follow_links) as file:
        data = read_at_most(file, limit)
    if data is None:
        raise FileTooLargeError(limit)
    return bytes(data)


def file_kind(mode: int) -> str:
    """What a file of ``mode`` (``st_mode``) is, in words: ``a FIFO (named pipe)``."""
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISREG, "a regular file"),
    )
    return next((words for test, words in kinds if test(mode)), "not a file phasegate reads")


def describe_bytes(count: int) -> str:
    """``count`` bytes as a bound is said: ``2 MiB``, ``64 MiB``, ``1000 bytes``."""
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if count >= size and count % size == 0:
            return f"{count // size} {unit}"
    return f"{count} bytes"


class Mark(Protocol):
    """Where in the text something starts (0-based line and column)."""

    line: int
    column: int


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
