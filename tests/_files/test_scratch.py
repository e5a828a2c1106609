"""Scratch folders: named for their process, removed by a later sweep once it is gone, and
never when it still runs, nor through a link."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from phasegate._files.scratch import make_scratch, scratch_folder, sweep_dead

PREFIX = "phasegate-test-"


def _dead_pid() -> int:
    """The id of a process that has ended (and been reaped)."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_a_folder_of_an_ended_process_is_swept_and_one_of_a_live_process_is_kept(
    tmp_path: Path,
) -> None:
    dead = tmp_path / f"{PREFIX}{_dead_pid()}.0-abc"
    (dead / "home").mkdir(parents=True)
    (dead / "home" / "file").write_text("left behind")
    live = make_scratch(PREFIX, parent=tmp_path)

    removed = sweep_dead(PREFIX, parent=tmp_path)

    assert removed == [dead]
    assert not dead.exists()
    assert live.is_dir()
    assert live.name.startswith(f"{PREFIX}{os.getpid()}.")
    assert oct(live.stat().st_mode & 0o777) == "0o700"


def test_a_process_id_taken_over_by_another_process_does_not_keep_a_folder(
    tmp_path: Path,
) -> None:
    """The same id, another start time: this process did not make it."""
    reused = tmp_path / f"{PREFIX}{os.getpid()}.1-abc"
    reused.mkdir()
    assert sweep_dead(PREFIX, parent=tmp_path) == [reused]


def test_a_link_or_a_file_or_another_name_is_left_alone(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    (target / "kept").write_text("mine")
    pid = _dead_pid()
    (tmp_path / f"{PREFIX}{pid}.0-link").symlink_to(target, target_is_directory=True)
    (tmp_path / f"{PREFIX}{pid}.0-file").write_text("a file")
    (tmp_path / f"{PREFIX}other-{pid}").mkdir()
    (tmp_path / f"phasegate-else-{pid}.0-x").mkdir()

    assert sweep_dead(PREFIX, parent=tmp_path) == []
    assert (target / "kept").read_text() == "mine"
    assert len(list(tmp_path.iterdir())) == 5


def test_a_scratch_folder_of_a_block_is_removed_after_it(tmp_path: Path) -> None:
    with scratch_folder(PREFIX, parent=tmp_path) as folder:
        (folder / "inner").mkdir()
        assert folder.is_dir()
    assert not folder.exists()
