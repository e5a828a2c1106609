"""Reverting a work directory: everything observed comes back, nothing outside is touched."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from phasegate.errors import UsageError
from phasegate.evidence.workspace import WorkspaceSnapshot
from phasegate.workspace.observer import WorkspaceObserver
from phasegate.workspace.revert import RevertReport, WorkspaceBackup
from tests.helpers.scratch import kill_hard, start_holder

OUTSIDE_WARNING = "is a symbolic link; it is not followed out of the work directory"


class _ObserverWithExtras(WorkspaceObserver):
    """An observer whose snapshots also list made-up paths (races, odd git listings)."""

    def __init__(self, workdir: Path, extras: dict[str, str]) -> None:
        super().__init__(workdir)
        self.extras = extras

    def snapshot(self) -> WorkspaceSnapshot:
        return WorkspaceSnapshot({**super().snapshot().files, **self.extras})


def _state(root: Path) -> dict[str, tuple[bytes, int]]:
    """Content and permission bits of every regular file below ``root``."""
    found: dict[str, tuple[bytes, int]] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            mode = stat.S_IMODE(path.stat().st_mode)
            found[path.relative_to(root).as_posix()] = (path.read_bytes(), mode)
    return found


def _outside(tmp_path: Path, name: str) -> Path:
    """A directory next to the work dir, standing for "elsewhere on the machine"."""
    place = tmp_path / name
    place.mkdir()
    return place


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A small project: sources in a package, a README, an executable script."""
    root = tmp_path / "work"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 1\n")
    (root / "src" / "util.py").write_text("HELP = 'x'\n")
    (root / "README.md").write_text("# Project\n")
    (root / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "run.sh").chmod(0o755)
    (root / "keep.txt").write_text("untouched\n")
    return root


def test_restore_undoes_modified_deleted_added_and_mode_changed_files(work: Path) -> None:
    """Bytes and modes come back, the new subdirectory goes, the report names each path."""
    before = _state(work)
    observer = WorkspaceObserver(work)
    with WorkspaceBackup.capture(observer) as backup:
        (work / "src" / "app.py").write_text("def main():\n    return 2\n")
        (work / "README.md").write_text("# Rewritten\n")
        (work / "src" / "util.py").unlink()
        (work / "generated" / "deep").mkdir(parents=True)
        (work / "generated" / "deep" / "extra.py").write_text("x = 1\n")
        (work / "run.sh").chmod(0o644)
        report = backup.restore(observer.snapshot())
    assert report == RevertReport(
        restored=["README.md", "run.sh", "src/app.py", "src/util.py"],
        removed=["generated/deep/extra.py"],
        failed=[],
    )
    assert _state(work) == before
    assert not (work / "generated").exists()
    assert observer.snapshot() == backup.snapshot


def test_restore_leaves_files_the_run_did_not_change_alone(work: Path) -> None:
    """An unchanged file keeps its inode and modification time: it is not rewritten."""
    keep = work / "keep.txt"
    os.utime(keep, ns=(1_000_000_000, 1_000_000_000))
    inode = keep.stat().st_ino
    observer = WorkspaceObserver(work)
    with WorkspaceBackup.capture(observer) as backup:
        (work / "src" / "app.py").write_text("changed\n")
        report = backup.restore(observer.snapshot())
    assert report.restored == ["src/app.py"]
    assert (keep.stat().st_mtime_ns, keep.stat().st_ino) == (1_000_000_000, inode)


def test_restore_with_nothing_changed_reports_nothing(work: Path) -> None:
    """A run that touched nothing yields three empty lists."""
    observer = WorkspaceObserver(work)
    with WorkspaceBackup.capture(observer) as backup:
        assert backup.restore(observer.snapshot()) == RevertReport()


def test_a_file_replaced_by_a_directory_and_a_directory_by_a_file_come_back(work: Path) -> None:
    """Added paths go first, so the run's file or directory is out of the way in time."""
    before = _state(work)
    observer = WorkspaceObserver(work)
    with WorkspaceBackup.capture(observer) as backup:
        (work / "README.md").unlink()
        (work / "README.md").mkdir()
        (work / "README.md" / "index.md").write_text("moved\n")
        shutil.rmtree(work / "src")
        (work / "src").write_text("not a package any more\n")
        report = backup.restore(observer.snapshot())
    assert report == RevertReport(
        restored=["README.md", "src/app.py", "src/util.py"],
        removed=["README.md/index.md", "src"],
    )
    assert _state(work) == before


def test_symlinks_are_restored_by_target_and_added_ones_removed_without_following(
    tmp_path: Path, work: Path
) -> None:
    """A retargeted, deleted or added link is handled as a link; its targets are not touched."""
    elsewhere = _outside(tmp_path, "elsewhere")
    (elsewhere / "secret.txt").write_text("secret\n")
    (work / "docs").symlink_to("README.md")
    (work / "latest").symlink_to(elsewhere / "secret.txt")
    observer = WorkspaceObserver(work)
    with WorkspaceBackup.capture(observer) as backup:
        (work / "docs").unlink()
        (work / "docs").symlink_to("keep.txt")
        (work / "latest").unlink()
        (work / "escape").symlink_to(elsewhere / "secret.txt")
        report = backup.restore(observer.snapshot())
    assert report == RevertReport(restored=["docs", "latest"], removed=["escape"])
    assert os.readlink(work / "docs") == "README.md"
    assert os.readlink(work / "latest") == str(elsewhere / "secret.txt")
    assert not (work / "escape").exists()
    assert (elsewhere / "secret.txt").read_text() == "secret\n"


def test_a_file_replaced_by_a_link_to_elsewhere_is_put_back_without_writing_through_it(
    tmp_path: Path, work: Path
) -> None:
    """Restoring replaces the link itself; the file it points to keeps its content."""
    elsewhere = _outside(tmp_path, "elsewhere")
    (elsewhere / "target.py").write_text("outside\n")
    observer = WorkspaceObserver(work)
    with WorkspaceBackup.capture(observer) as backup:
        (work / "src" / "app.py").unlink()
        (work / "src" / "app.py").symlink_to(elsewhere / "target.py")
        report = backup.restore(observer.snapshot())
    assert report == RevertReport(restored=["src/app.py"])
    assert not (work / "src" / "app.py").is_symlink()
    assert (work / "src" / "app.py").read_text() == "def main():\n    return 1\n"
    assert (elsewhere / "target.py").read_text() == "outside\n"


def test_a_directory_replaced_by_a_link_to_elsewhere_is_recreated_in_place(
    tmp_path: Path, work: Path
) -> None:
    """The run's link is deleted as a link first; nothing is written into where it pointed."""
    elsewhere = _outside(tmp_path, "elsewhere")
    (elsewhere / "app.py").write_text("outside app\n")
    before = _state(work)
    observer = WorkspaceObserver(work)
    with WorkspaceBackup.capture(observer) as backup:
        shutil.rmtree(work / "src")
        (work / "src").symlink_to(elsewhere, target_is_directory=True)
        report = backup.restore(observer.snapshot())
    assert report == RevertReport(restored=["src/app.py", "src/util.py"], removed=["src"])
    assert _state(work) == before
    assert sorted(p.name for p in elsewhere.iterdir()) == ["app.py"]
    assert (elsewhere / "app.py").read_text() == "outside app\n"


def test_paths_below_a_link_that_was_already_there_fail_instead_of_escaping(
    tmp_path: Path, work: Path
) -> None:
    """Neither capture nor restore reads, writes or deletes through a link in a path's parents."""
    elsewhere = _outside(tmp_path, "elsewhere")
    (elsewhere / "listed.txt").write_text("outside\n")
    (elsewhere / "kept.txt").write_text("outside\n")
    (work / "vendor").symlink_to(elsewhere, target_is_directory=True)
    # As if a listing had reported files through the link (git lists tracked paths so).
    observer = _ObserverWithExtras(work, {"vendor/kept.txt": "0" * 64})
    with WorkspaceBackup.capture(observer) as backup:
        (elsewhere / "kept.txt").unlink()
        now = WorkspaceObserver(work).snapshot().files
        report = backup.restore(WorkspaceSnapshot({**now, "vendor/listed.txt": "1" * 64}))
    assert report == RevertReport(
        failed=[
            f"vendor/kept.txt: not backed up: vendor {OUTSIDE_WARNING}",
            f"vendor/listed.txt: vendor {OUTSIDE_WARNING}",
        ]
    )
    assert sorted(p.name for p in elsewhere.iterdir()) == ["listed.txt"]


def test_files_that_could_not_be_read_at_capture_are_reported_as_failed(work: Path) -> None:
    """A vanished or unreadable file is recorded at capture and named on restore."""
    observer = _ObserverWithExtras(work, {"vanished.txt": "0" * 64, "keep.txt": "unreadable:13"})
    with WorkspaceBackup.capture(observer) as backup:
        report = backup.restore(WorkspaceObserver(work).snapshot())
    assert report.failed == [
        "keep.txt: not backed up: could not be read when the backup was taken",
        "vanished.txt: not backed up: could not be read when the backup was taken "
        "(No such file or directory)",
    ]
    assert report.restored == report.removed == []


def test_a_file_changing_while_it_is_copied_is_not_restored_from_a_wrong_copy(
    work: Path,
) -> None:
    """The copy must match the snapshot; one that does not is reported, not put back."""
    observer = _ObserverWithExtras(work, {"keep.txt": "f" * 64})
    with WorkspaceBackup.capture(observer) as backup:
        (work / "keep.txt").write_text("changed\n")
        report = backup.restore(WorkspaceObserver(work).snapshot())
    assert report.failed == ["keep.txt: not backed up: changed while the backup was being taken"]
    assert (work / "keep.txt").read_text() == "changed\n"


def test_a_directory_the_run_created_is_kept_while_it_holds_unobserved_files(
    work: Path,
) -> None:
    """Skipped files (here __pycache__) are not the backup's to delete, so their directory stays."""
    observer = WorkspaceObserver(work)
    with WorkspaceBackup.capture(observer) as backup:
        (work / "pkg" / "__pycache__").mkdir(parents=True)
        (work / "pkg" / "__pycache__" / "mod.pyc").write_bytes(b"\0")
        (work / "pkg" / "mod.py").write_text("x = 1\n")
        report = backup.restore(observer.snapshot())
    assert report.removed == ["pkg/mod.py"]
    assert (work / "pkg" / "__pycache__" / "mod.pyc").exists()


def test_closing_removes_the_private_copies_and_ends_restoring(work: Path) -> None:
    """The copies live in a private temporary directory that close() (or `with`) deletes."""
    observer = WorkspaceObserver(work)
    with WorkspaceBackup.capture(observer) as backup:
        store = backup.store
        assert store.name.startswith("phasegate-backup-")
        assert stat.S_IMODE(store.stat().st_mode) == 0o700
        assert len(list(store.iterdir())) == 5
    assert not store.exists()
    backup.close()  # a second close is harmless
    with pytest.raises(UsageError, match="closed"):
        backup.restore(observer.snapshot())


def test_a_backup_removes_the_copies_a_run_killed_with_sigkill_left(
    tmp_path: Path, temp_root: Path
) -> None:
    """A backup copies the whole work directory; a killed run's copies would stay for good."""
    holder, (left,) = start_holder(temp_root, ["phasegate-backup"])
    kill_hard(holder)
    workdir = tmp_path / "work"
    workdir.mkdir()
    (workdir / "a.txt").write_text("a")

    with WorkspaceBackup.capture(WorkspaceObserver(workdir)) as backup:
        assert not left.exists()
        assert backup.store.parent == temp_root and backup.store.is_dir()
    assert not backup.store.exists()
