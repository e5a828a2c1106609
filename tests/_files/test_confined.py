"""Folders phasegate writes in are entered step by step, never through a symbolic link; a
named path stays inside its folder (resolve_inside)."""

from __future__ import annotations

import errno
import os
import threading
import time
from pathlib import Path

import pytest

from phasegate._files.atomic import write_atomic
from phasegate._files.confined import (
    OutsideFolderError,
    held_lock,
    inside_folder,
    open_lock,
    remove_inside,
    resolve_inside,
)
from phasegate.errors import LinkedPathError, UsageError


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder that must never change, with a file in it."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "keep.txt").write_text("kept")
    return folder


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    return folder


def test_missing_folders_are_made_one_by_one(root: Path) -> None:
    assert inside_folder(root, "a/b/c") == root / "a" / "b" / "c"
    assert (root / "a" / "b" / "c").is_dir()


def test_a_link_on_the_way_is_refused_naming_it_and_nothing_is_made_beyond(
    root: Path, outside: Path
) -> None:
    (root / "a").symlink_to(outside, target_is_directory=True)
    with pytest.raises(LinkedPathError) as raised:
        inside_folder(root, "a/b")
    assert isinstance(raised.value, UsageError)  # exit code 2
    assert "a is a symbolic link; it is not followed out of" in str(raised.value)
    assert str(root) in str(raised.value)
    assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]


def test_a_file_where_a_folder_goes_is_refused(root: Path) -> None:
    (root / "a").write_text("")
    with pytest.raises(LinkedPathError, match="a is not a directory"):
        inside_folder(root, "a/b")


def test_the_folder_given_may_itself_be_a_link(tmp_path: Path, outside: Path) -> None:
    """The user named it: only what lies below it must be real folders."""
    (tmp_path / "named").symlink_to(outside, target_is_directory=True)
    assert inside_folder(tmp_path / "named", "state").is_dir()


def test_an_atomic_write_inside_a_folder_refuses_a_link_on_the_way(
    root: Path, outside: Path
) -> None:
    (root / ".phasegate").symlink_to(outside, target_is_directory=True)
    with pytest.raises(LinkedPathError, match=r"\.phasegate is a symbolic link"):
        write_atomic(root / ".phasegate" / "state.json", b"{}", inside=root)
    assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]


def test_an_atomic_write_replaces_a_link_under_its_own_name_not_its_target(
    root: Path, outside: Path
) -> None:
    (root / "state.json").symlink_to(outside / "keep.txt")
    write_atomic(root / "state.json", b"{}", inside=root)
    assert not (root / "state.json").is_symlink()
    assert (outside / "keep.txt").read_text() == "kept"


def test_a_lock_file_that_is_a_link_is_refused_and_its_target_never_made(
    root: Path, outside: Path
) -> None:
    (root / ".lock").symlink_to(outside / "made-by-phasegate")
    with pytest.raises(LinkedPathError, match=r"\.lock is a symbolic link"):
        open_lock(root / ".lock")
    assert not (outside / "made-by-phasegate").exists()


def test_removing_a_link_removes_the_link_and_leaves_what_it_points_at(
    root: Path, outside: Path
) -> None:
    (root / "leftover").symlink_to(outside, target_is_directory=True)
    remove_inside(root, "leftover")
    assert not (root / "leftover").exists()
    assert (outside / "keep.txt").read_text() == "kept"


def test_removing_a_folder_removes_everything_in_it(root: Path) -> None:
    (root / "half" / "deep").mkdir(parents=True)
    (root / "half" / "deep" / "f").write_text("")
    remove_inside(root, "half")
    assert list(root.iterdir()) == []


def test_nothing_is_removed_through_a_folder_that_is_a_link(tmp_path: Path, outside: Path) -> None:
    (tmp_path / "incoming").symlink_to(outside, target_is_directory=True)
    remove_inside(tmp_path / "incoming", "keep.txt")
    assert (outside / "keep.txt").read_text() == "kept"


# ---- resolve_inside: a named path that must stay in its folder ------------------------------


def test_a_path_inside_resolves_through_links_that_stay_inside(root: Path) -> None:
    """Relative and absolute paths, and links that stay in the folder, resolve."""
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("x")
    (root / "alias").symlink_to(root / "src")
    assert resolve_inside(root, "src/app.py") == (root / "src/app.py").resolve()
    assert resolve_inside(root, root / "alias" / "app.py") == (root / "src/app.py").resolve()
    assert resolve_inside(root, ".") == root.resolve()
    assert resolve_inside(root, "not-yet/there") == root.resolve() / "not-yet/there"


@pytest.mark.parametrize("name", ["../elsewhere", "/etc/passwd", "link/secret"])
def test_a_path_that_leads_out_is_refused_saying_where_it_leads(
    root: Path, outside: Path, name: str
) -> None:
    """``..``, an absolute path elsewhere and a link out all end in OutsideFolderError."""
    (root / "link").symlink_to(outside)
    with pytest.raises(OutsideFolderError) as caught:
        resolve_inside(root, name)
    assert not caught.value.resolved.is_relative_to(root.resolve())
    assert f"outside the folder {root.resolve()}" in str(caught.value)


def test_a_link_loop_a_nul_and_a_missing_strict_path_are_os_errors(root: Path) -> None:
    """Whatever the Python version, a loop is ELOOP, a NUL is EINVAL, never RuntimeError."""
    (root / "loop").symlink_to(root / "loop")
    with pytest.raises(OSError, match="symbolic links") as loop:
        resolve_inside(root, "loop/x")
    assert loop.value.errno == errno.ELOOP
    with pytest.raises(OSError, match="NUL") as nul:
        resolve_inside(root, "a\x00b")
    assert nul.value.errno == errno.EINVAL
    with pytest.raises(FileNotFoundError):
        resolve_inside(root, "missing", strict=True)


def test_a_held_lock_file_is_removed_when_the_block_ends_even_by_an_error(root: Path) -> None:
    lock = root / "k.lock"
    seen: list[bool] = []

    def refused() -> None:
        with held_lock(lock):
            seen.append(lock.exists())
            raise RuntimeError("refused")

    with pytest.raises(RuntimeError):
        refused()
    assert seen == [True] and not lock.exists()


def blocked_on(path: Path) -> bool:
    """Whether some lock request on ``path``'s file waits (a ``->`` line of /proc/locks)."""
    inode = f":{os.stat(path).st_ino} "
    return any(
        "->" in line and inode in line for line in Path("/proc/locks").read_text().splitlines()
    )


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="needs Linux's /proc/locks")
def test_a_waiter_on_a_lock_file_removed_under_it_takes_the_new_one(root: Path) -> None:
    """The waiter's lock is on a file no longer named: it opens the name again, so two
    holders never run at once, and the name is gone once both are done."""
    lock = root / "k.lock"
    inside = threading.Event()
    with held_lock(lock):
        waiter = threading.Thread(target=lambda: _hold(lock, inside))
        waiter.start()
        deadline = time.monotonic() + 30  # a condition waited on, with a timeout
        while not blocked_on(lock) and waiter.is_alive() and time.monotonic() < deadline:
            time.sleep(0.001)
        assert blocked_on(lock)
        assert not inside.is_set()
    waiter.join(timeout=30)
    assert inside.is_set() and not waiter.is_alive()
    assert not lock.exists()


def _hold(lock: Path, inside: threading.Event) -> None:
    """Hold ``lock``; set ``inside`` only if the name is there while held (the waiter's lock
    is on the named file, not on one its first holder removed)."""
    with held_lock(lock):
        if os.path.lexists(lock):
            inside.set()
