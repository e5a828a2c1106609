"""Putting a work directory back the way it was before a rejected run.

:meth:`WorkspaceBackup.capture` copies every file a
:class:`~phasegate.workspace.observer.WorkspaceObserver` sees
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

How one path is copied and put back is in :mod:`phasegate.workspace.copies`; how paths are
entered and removed without following links, in :mod:`phasegate.workspace.confined`.
"""

from __future__ import annotations

import shutil
import stat
import weakref
from pathlib import Path
from types import TracebackType

from pydantic import BaseModel, ConfigDict, Field

from phasegate._files.scratch import make_scratch, sweep_dead
from phasegate.errors import UsageError
from phasegate.evidence.workspace import WorkspaceDiff, WorkspaceSnapshot
from phasegate.workspace.confined import remove_added, remove_created_directories
from phasegate.workspace.copies import SavedPath, put_back, save_path
from phasegate.workspace.observer import WorkspaceObserver

BACKUP_SCRATCH = "phasegate-backup"
"""The prefix of a backup's temporary folder (copies of the work directory's files)."""


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
        self._saved: dict[str, SavedPath] = {}
        # Copies of the project must not outlive the backup even if close() is forgotten.
        self._cleanup = weakref.finalize(self, shutil.rmtree, store, ignore_errors=True)

    @classmethod
    def capture(cls, observer: WorkspaceObserver) -> WorkspaceBackup:
        """Snapshot ``observer``'s work directory and copy every file of the snapshot.

        Files that cannot be read are recorded, not fatal: :meth:`restore` reports them as
        failed. Errors writing the copies (a full disk) are raised after cleaning up.
        """
        snapshot = observer.snapshot()
        sweep_dead(BACKUP_SCRATCH)  # copies left by a run that was killed
        store = make_scratch(BACKUP_SCRATCH)
        backup = cls(observer.workdir, snapshot, store)
        try:
            for number, (relative, digest) in enumerate(sorted(snapshot.files.items())):
                backup._saved[relative] = save_path(
                    backup.workdir, relative, digest, store / str(number)
                )
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
        removed, failed = remove_added(self.workdir, diff.added)
        remove_created_directories(self.workdir, diff.added, before=self.snapshot.files)
        # An unreadable file hashes the same whatever it holds, so a change cannot be ruled out.
        unknown = {p for p, d in self.snapshot.files.items() if d.startswith("unreadable:")}
        modes = self._mode_changes(current)
        restored: list[str] = []
        for relative in sorted({*diff.modified, *diff.deleted, *unknown, *modes}):
            saved = self._saved[relative]
            problem = put_back(self.workdir, relative, saved, mode_only=relative in modes)
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
