"""The file layer where the platform lacks what Linux has (:mod:`phasegate._files.portable`):
exclusive locks, and, as on Windows, no ``O_NOFOLLOW`` and no descriptors of folders, with
links still refused or removed as links. (Windows itself is not run here: these take its
branches on Linux.)"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from phasegate._files import confined, limits
from phasegate._files.confined import open_appending, remove_inside
from phasegate._files.limits import NotRegularFileError, open_regular
from phasegate._files.portable import lock_exclusive
from phasegate.errors import LinkedPathError


def test_a_lock_held_elsewhere_is_refused_at_once_without_wait_and_free_once_closed(
    tmp_path: Path,
) -> None:
    path = tmp_path / ".lock"
    path.touch()
    holder = os.open(path, os.O_RDWR)
    other = os.open(path, os.O_RDWR)
    try:
        lock_exclusive(holder)
        with pytest.raises(BlockingIOError):
            lock_exclusive(other, wait=False)
        os.close(holder)
        lock_exclusive(other, wait=False)  # the holder closed: free
    finally:
        os.close(other)


def test_without_folder_descriptors_a_folder_is_removed_and_a_link_only_as_a_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(confined, "FOLDER_DESCRIPTORS", False)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep\n", encoding="utf-8")
    folder = tmp_path / "folder"
    (folder / "unit" / "deep").mkdir(parents=True)
    (folder / "unit" / "deep" / "a.txt").write_text("a\n", encoding="utf-8")
    (folder / "link").symlink_to(outside)

    remove_inside(folder, "unit")
    remove_inside(folder, "link")

    assert sorted(os.listdir(folder)) == []
    assert (outside / "keep.txt").read_text(encoding="utf-8") == "keep\n"


def test_without_o_nofollow_a_link_is_still_refused_for_reading_and_appending(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "NOFOLLOW", 0)
    monkeypatch.setattr(confined, "NOFOLLOW", 0)
    target = tmp_path / "target.txt"
    target.write_text("secret\n", encoding="utf-8")
    link = tmp_path / "link.txt"
    link.symlink_to(target)

    with (
        pytest.raises(NotRegularFileError, match="symbolic link"),
        open_regular(link, follow_links=False),
    ):
        pass
    with pytest.raises(LinkedPathError, match="is a symbolic link"):
        open_appending(link)
    assert target.read_text(encoding="utf-8") == "secret\n"
