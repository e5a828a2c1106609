"""Writing so that a crash leaves the old content or the new, never a mixture."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from phasegate._files.confined import inside_folder


def write_atomic(path: Path, data: bytes, *, inside: Path | None = None) -> None:
    """Write ``data`` to ``path``: a temporary file in the same directory, fsynced, renamed
    over ``path``, then the directory fsynced so the rename itself survives a crash.

    ``inside``: the folder ``path`` lies below; every folder between them must be a real
    folder (made when missing), never a symbolic link, or a
    :class:`~phasegate.errors.LinkedPathError` names it and nothing is written. The rename
    replaces a link planted under ``path``'s own name, never what it points at.

    Raises :class:`OSError`; the temporary file is gone then.
    """
    if inside is None:
        path.parent.mkdir(parents=True, exist_ok=True)
    else:
        between = path.parent.relative_to(inside).as_posix()
        inside_folder(inside, "" if between == "." else between)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    fsync_directory(path.parent)


def write_synced(path: Path, data: bytes) -> None:
    """Write a new file and fsync it (for files made in a directory renamed into place)."""
    with path.open("xb") as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())


def fsync_directory(directory: Path) -> None:
    """Make the entries of ``directory`` (a rename into it) durable."""
    handle = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)
