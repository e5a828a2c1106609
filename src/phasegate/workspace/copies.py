"""One path's copy in a workspace backup: taken without following links, put back whole.

A regular file is copied into the backup's store together with its permission bits, and the
copy is kept only if it hashes to what the snapshot recorded. A symbolic link is kept as its
target. Anything else (a path below a link, a file that vanished, could not be read or
changed while it was copied) is kept as the reason it cannot be put back.

Putting back renames a finished temporary file or link over the path, so it never writes
through a link the run made and never leaves a half-written file behind.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from phasegate._files.confined import blocked_at
from phasegate._files.portable import BINARY, NOFOLLOW, NONBLOCK
from phasegate.workspace.confined import parent_of
from phasegate.workspace.observer import CHUNK_BYTES

_TEMP_NAME_BYTES = 6
"""Random bytes in a temporary file's name while it is put back, so none collides."""


@dataclass(frozen=True, slots=True)
class SavedPath:
    """How one captured path can be put back: a copy, a link target, or why neither."""

    blob: Path | None = None
    """The copy in the backup's store, for a regular file."""
    mode: int = 0
    """The file's permission bits when it was copied."""
    link: str | None = None
    """The target, for a symbolic link."""
    problem: str | None = None
    """Why the path cannot be put back."""


def save_path(workdir: Path, relative: str, digest: str, blob: Path) -> SavedPath:
    """Keep ``relative`` (whose snapshot digest is ``digest``), copying a file to ``blob``."""
    try:
        blocked = blocked_at(workdir, parent_of(relative))
    except FileNotFoundError:
        return SavedPath(problem="vanished before the backup was taken")
    if blocked is not None:
        return SavedPath(problem=blocked)
    if digest.startswith("link:"):
        return SavedPath(link=digest.removeprefix("link:"))
    if digest.startswith("unreadable:"):
        return SavedPath(problem="could not be read when the backup was taken")
    return _copy_out(workdir / relative, blob, digest)


def put_back(workdir: Path, relative: str, saved: SavedPath, *, mode_only: bool) -> str | None:
    """Restore one path (only its permission bits, with ``mode_only``); why it could not be
    restored, or None."""
    if saved.problem is not None:
        return f"not backed up: {saved.problem}"
    path = workdir / relative
    try:
        blocked = blocked_at(workdir, parent_of(relative), create=True)
        if blocked is not None:
            return blocked
        if mode_only:
            path.chmod(saved.mode)
        elif path.is_dir() and not path.is_symlink():
            return "is now a directory holding files the backup does not cover"
        else:
            _place(path, saved)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def _copy_out(source: Path, blob: Path, digest: str) -> SavedPath:
    """Copy a regular file into the store without following a link at ``source``."""
    try:
        # O_NONBLOCK: opening a FIFO that replaced the file must not hang the capture.
        if not NOFOLLOW and source.is_symlink():  # no O_NOFOLLOW (Windows): asked first
            return SavedPath(problem="was a symbolic link when the backup was taken")
        handle = os.open(source, os.O_RDONLY | NOFOLLOW | NONBLOCK | BINARY)
    except OSError as exc:
        return SavedPath(problem=f"could not be read when the backup was taken ({exc.strerror})")
    hasher = hashlib.sha256()
    with os.fdopen(handle, "rb") as reader:
        info = os.fstat(reader.fileno())
        if not stat.S_ISREG(info.st_mode):
            return SavedPath(problem="was not a regular file when the backup was taken")
        with blob.open("xb") as writer:
            while True:
                try:
                    chunk = reader.read(CHUNK_BYTES)
                except OSError as exc:
                    return SavedPath(
                        problem=f"could not be read when the backup was taken ({exc.strerror})"
                    )
                if not chunk:
                    break
                hasher.update(chunk)
                writer.write(chunk)
    # The snapshot is what restore compares against, so the copy must hold exactly that.
    if hasher.hexdigest() != digest:
        return SavedPath(problem="changed while the backup was being taken")
    return SavedPath(blob=blob, mode=stat.S_IMODE(info.st_mode))


def _place(path: Path, saved: SavedPath) -> None:
    """Put ``saved`` at ``path`` by renaming a finished temporary file or link over it.

    A rename replaces whatever is at ``path`` (a file, or a link the run made) without writing
    through it, and never leaves a half-written file behind.
    """
    temp = path.parent / f".{path.name}.{secrets.token_hex(_TEMP_NAME_BYTES)}.phasegate-restore"
    try:
        if saved.link is not None:
            os.symlink(saved.link, temp)
        elif saved.blob is not None:
            with saved.blob.open("rb") as reader, temp.open("xb") as writer:
                shutil.copyfileobj(reader, writer, CHUNK_BYTES)
            temp.chmod(saved.mode)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
