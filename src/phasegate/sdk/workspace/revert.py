"""Putting a work directory back the way it was before a rejected run.

:meth:`WorkspaceBackup.capture` copies every file a
:class:`~phasegate.sdk.workspace.observer.WorkspaceObserver` sees
into a private temporary directory;
:meth:`WorkspaceBackup.restore` compares a snapshot taken now with the captured one and undoes
the difference: modified and deleted files get their old content and permission bits back,
added files are deleted, and directories that only the run's files needed are removed again.

Only what the observer sees is covered: ``.git``, virtual environments, ``node_modules``,
``__pycache__``, ``.phasegate`` and, in a git work tree, git-ignored files are neither backed
up, restored nor deleted, and neither are empty directories. A directory the run created is
therefore left in place when it still holds such files. Restored files get a fresh
modification time so build tools notice them; files the run did not change are not touched.

Nothing outside the work directory is written or deleted. Symbolic links are backed up and
restored as links (by target), never followed. Nor is a path whose parent is a link: a link
the run added, say in place of a directory, is itself an added path and is deleted first (the
link, not what it points to), so the directory can be recreated; a link that was already
there, or that the observer does not see, leaves the paths below it in
:attr:`RevertReport.failed`.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import shutil
import stat
import tempfile
import weakref
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from pydantic import BaseModel, ConfigDict, Field

from phasegate.errors import UsageError
from phasegate.evidence.workspace import WorkspaceDiff, WorkspaceSnapshot
from phasegate.sdk.workspace.observer import WorkspaceObserver

_CHUNK = 1 << 20


class RevertReport(BaseModel):
    """What :meth:`WorkspaceBackup.restore` did; relative POSIX paths, each list sorted."""

    model_config = ConfigDict(frozen=True)

    restored: list[str] = Field(
        default_factory=list,
        description="Files the run modified (content or permission bits) or deleted, put back "
        "with their old content.",
    )
    removed: list[str] = Field(
        default_factory=list, description="Files the run added, deleted again."
    )
    failed: list[str] = Field(
        default_factory=list,
        description="What could not be put back, one 'path: reason' entry per path.",
    )


@dataclass(frozen=True, slots=True)
class _Saved:
    """How one captured path can be put back: a copy, a link target, or why neither."""

    blob: Path | None = None
    mode: int = 0
    link: str | None = None
    problem: str | None = None


class WorkspaceBackup:
    """A copy of every observed file of a work directory, to put back after a rejected run.

    Take one with :meth:`capture`; :meth:`close` (or leaving a ``with`` block) deletes the
    copies. A backup that is never closed is deleted when it is garbage collected.
    """

    def __init__(self, workdir: Path, snapshot: WorkspaceSnapshot, store: Path) -> None:
        """An empty backup of ``snapshot`` kept in ``store``; :meth:`capture` fills one."""
        self.workdir = workdir
        """The work directory, resolved."""
        self.snapshot = snapshot
        """What the observer saw when the backup was taken."""
        self.store = store
        """The private temporary directory holding the copies."""
        self._saved: dict[str, _Saved] = {}
        # Copies of the project must not outlive the backup even if close() is forgotten.
        self._cleanup = weakref.finalize(self, shutil.rmtree, store, ignore_errors=True)

    @classmethod
    def capture(cls, observer: WorkspaceObserver) -> WorkspaceBackup:
        """Snapshot ``observer``'s work directory and copy every file of the snapshot.

        Files that cannot be read are recorded, not fatal: :meth:`restore` reports them as
        failed. Errors writing the copies (a full disk) are raised after cleaning up.
        """
        snapshot = observer.snapshot()
        store = Path(tempfile.mkdtemp(prefix="phasegate-backup-"))
        backup = cls(observer.workdir, snapshot, store)
        try:
            for number, (relative, digest) in enumerate(sorted(snapshot.files.items())):
                backup._saved[relative] = backup._save(relative, digest, store / str(number))
        except BaseException:
            backup.close()
            raise
        return backup

    def restore(self, current: WorkspaceSnapshot) -> RevertReport:
        """Undo every change between the captured snapshot and ``current``.

        ``current`` must be taken now by the observer the backup was captured from. Added
        files go first, so that a file or link the run put where a directory used to be is out
        of the way before that directory's files are put back.
        """
        if not self._cleanup.alive:
            raise UsageError("this workspace backup is closed; capture a new one to restore")
        diff = WorkspaceDiff.between(self.snapshot, current)
        removed, failed = self._remove_added(diff.added)
        self._remove_new_directories(diff.added)
        # An unreadable file hashes the same whatever it holds, so a change cannot be ruled out.
        unknown = {p for p, d in self.snapshot.files.items() if d.startswith("unreadable:")}
        modes = self._mode_changes(current)
        restored: list[str] = []
        for relative in sorted({*diff.modified, *diff.deleted, *unknown, *modes}):
            problem = self._put_back(relative, mode_only=relative in modes)
            if problem is None:
                restored.append(relative)
            else:
                failed.append(f"{relative}: {problem}")
        return RevertReport(restored=restored, removed=sorted(removed), failed=sorted(failed))

    def close(self) -> None:
        """Delete the copies; the backup cannot restore afterwards. Safe to call twice."""
        self._cleanup()

    def __enter__(self) -> WorkspaceBackup:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _save(self, relative: str, digest: str, blob: Path) -> _Saved:
        try:
            blocked = _blocked_at(self.workdir, _parent(relative))
        except FileNotFoundError:
            return _Saved(problem="vanished before the backup was taken")
        if blocked is not None:
            return _Saved(problem=blocked)
        if digest.startswith("link:"):
            return _Saved(link=digest.removeprefix("link:"))
        if digest.startswith("unreadable:"):
            return _Saved(problem="could not be read when the backup was taken")
        return _copy_out(self.workdir / relative, blob, digest)

    def _remove_added(self, added: tuple[str, ...]) -> tuple[list[str], list[str]]:
        removed: list[str] = []
        failed: list[str] = []
        # Sorted, a link the run put in place of a directory goes before the paths below it.
        for relative in added:
            try:
                blocked = _blocked_at(self.workdir, _parent(relative))
                if blocked is None:
                    (self.workdir / relative).unlink()
            except FileNotFoundError:
                blocked = None  # already gone, with its file or with a directory above it
            except OSError as exc:
                blocked = exc.strerror or str(exc)
            if blocked is None:
                removed.append(relative)
            else:
                failed.append(f"{relative}: {blocked}")
        return removed, failed

    def _remove_new_directories(self, added: tuple[str, ...]) -> None:
        before = {d for relative in self.snapshot.files for d in _directories_of(relative)}
        created = {d for relative in added for d in _directories_of(relative)} - before
        for directory in sorted(created, key=lambda d: d.count("/"), reverse=True):
            with contextlib.suppress(OSError):
                # Not empty means it holds files the observer does not see: those stay.
                if _blocked_at(self.workdir, directory) is None:
                    (self.workdir / directory).rmdir()

    def _mode_changes(self, current: WorkspaceSnapshot) -> set[str]:
        """Files with their old content but other permission bits (a hash does not see modes)."""
        changed: set[str] = set()
        for relative, digest in current.files.items():
            saved = self._saved.get(relative)
            if saved is None or saved.blob is None or self.snapshot.files[relative] != digest:
                continue
            try:
                info = (self.workdir / relative).lstat()
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) != saved.mode:
                changed.add(relative)
        return changed

    def _put_back(self, relative: str, *, mode_only: bool) -> str | None:
        """Restore one path; why it could not be restored, or None."""
        saved = self._saved[relative]
        if saved.problem is not None:
            return f"not backed up: {saved.problem}"
        path = self.workdir / relative
        try:
            blocked = _blocked_at(self.workdir, _parent(relative), create=True)
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


def _copy_out(source: Path, blob: Path, digest: str) -> _Saved:
    """Copy a regular file into the store without following a link at ``source``."""
    try:
        # O_NONBLOCK: opening a FIFO that replaced the file must not hang the capture.
        handle = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        return _Saved(problem=f"could not be read when the backup was taken ({exc.strerror})")
    hasher = hashlib.sha256()
    with os.fdopen(handle, "rb") as reader:
        info = os.fstat(reader.fileno())
        if not stat.S_ISREG(info.st_mode):
            return _Saved(problem="was not a regular file when the backup was taken")
        with blob.open("xb") as writer:
            while True:
                try:
                    chunk = reader.read(_CHUNK)
                except OSError as exc:
                    return _Saved(
                        problem=f"could not be read when the backup was taken ({exc.strerror})"
                    )
                if not chunk:
                    break
                hasher.update(chunk)
                writer.write(chunk)
    # The snapshot is what restore compares against, so the copy must hold exactly that.
    if hasher.hexdigest() != digest:
        return _Saved(problem="changed while the backup was being taken")
    return _Saved(blob=blob, mode=stat.S_IMODE(info.st_mode))


def _place(path: Path, saved: _Saved) -> None:
    """Put ``saved`` at ``path`` by renaming a finished temporary file or link over it.

    A rename replaces whatever is at ``path`` (a file, or a link the run made) without writing
    through it, and never leaves a half-written file behind.
    """
    temp = path.parent / f".{path.name}.{secrets.token_hex(6)}.phasegate-restore"
    try:
        if saved.link is not None:
            os.symlink(saved.link, temp)
        elif saved.blob is not None:
            with saved.blob.open("rb") as reader, temp.open("xb") as writer:
                shutil.copyfileobj(reader, writer, _CHUNK)
            temp.chmod(saved.mode)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise


def _blocked_at(workdir: Path, directory: str, *, create: bool = False) -> str | None:
    """Why ``directory`` (relative, "" for the work dir) cannot be entered safely, or None.

    Every step down from the work dir must be a real directory, not a link that may lead out
    of it. A missing step is created when ``create`` is set and raises FileNotFoundError
    otherwise.
    """
    if not directory:
        return None
    parts = directory.split("/")
    for depth in range(1, len(parts) + 1):
        step = "/".join(parts[:depth])
        try:
            mode = (workdir / step).lstat().st_mode
        except FileNotFoundError:
            if not create:
                raise
            (workdir / step).mkdir()
            continue
        if stat.S_ISLNK(mode):
            return f"{step} is a symbolic link; it is not followed out of the work directory"
        if not stat.S_ISDIR(mode):
            return f"{step} is not a directory"
    return None


def _parent(relative: str) -> str:
    return relative.rpartition("/")[0]


def _directories_of(relative: str) -> list[str]:
    """The directories above a relative path, outermost first, not counting the work dir."""
    parts = relative.split("/")[:-1]
    return ["/".join(parts[: depth + 1]) for depth in range(len(parts))]
