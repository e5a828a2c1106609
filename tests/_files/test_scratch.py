"""Temporary folders named for the process that made them, removed once it is dead."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from phasegate._files.scratch import make_scratch, scratch_folder, sweep_dead
from tests.helpers.scratch import kill_hard, reap_holder, start_holder


def test_a_scratch_folder_is_private_named_for_this_process_and_removed_after(
    temp_root: Path,
) -> None:
    with scratch_folder("phasegate-unit") as folder:
        assert folder.parent == temp_root and folder.is_dir()
        assert folder.name.startswith("phasegate-unit-")
        _, pid, start, _ = folder.name.removeprefix("phasegate-unit-").split("-", 3)
        assert int(pid) == os.getpid() and (len(pid), len(start)) == (10, 12)
        assert folder.stat().st_mode & 0o077 == 0
        (folder / "copy").write_text("x")
    assert not folder.exists()


def test_the_folders_of_a_process_killed_with_sigkill_are_swept_and_a_live_ones_kept(
    temp_root: Path,
) -> None:
    dead, (left,) = start_holder(temp_root, ["phasegate-unit"])
    alive, (kept,) = start_holder(temp_root, ["phasegate-unit"])
    mine = make_scratch("phasegate-unit")
    try:
        kill_hard(dead)
        assert left.is_dir()  # SIGKILL ran no cleanup

        assert sweep_dead("phasegate-unit") == [left]

        assert not left.exists() and kept.is_dir() and mine.is_dir()
    finally:
        kill_hard(alive)


def test_a_killed_process_not_yet_reaped_counts_as_dead(temp_root: Path) -> None:
    """A zombie still has its pid, but will never use its folder again."""
    child, (left,) = start_holder(temp_root, ["phasegate-home"])
    kill_hard(child, reap=False)
    stat_file = Path(f"/proc/{child.pid}/stat")
    deadline = time.monotonic() + 30  # a condition waited on, with a timeout
    while stat_file.exists() and " Z " not in stat_file.read_text() and time.monotonic() < deadline:
        time.sleep(0.001)
    try:
        assert sweep_dead("phasegate-home") == [left]
    finally:
        reap_holder(child)


def test_only_the_prefix_asked_for_is_swept(temp_root: Path) -> None:
    """``phasegate-unit`` is the start of ``phasegate-unit-out``, which it never sweeps."""
    child, (unit, out) = start_holder(temp_root, ["phasegate-unit", "phasegate-unit-out"])
    kill_hard(child)

    assert sweep_dead("phasegate-unit") == [unit]
    assert out.is_dir()
    assert sweep_dead("phasegate-unit-out") == [out]


def test_what_only_looks_like_a_dead_folder_is_left_alone(temp_root: Path, tmp_path: Path) -> None:
    """A link under such a name (to a folder that must stay), a file, another machine's
    folder (its pid means nothing here), a name not quite ours: none is touched."""
    child, (left,) = start_holder(temp_root, ["phasegate-unit"])
    kill_hard(child)
    machine, pid, start, _ = left.name.removeprefix("phasegate-unit-").split("-", 3)
    target = tmp_path / "keep"
    target.mkdir()
    (target / "precious").write_text("kept")
    moved = temp_root / f"phasegate-unit-{machine}-{pid}-{start}-moved"
    left.rename(moved)
    planted = [
        temp_root / f"phasegate-unit-{machine}-{pid}-{start}-link",
        temp_root / f"phasegate-unit-{machine}-{pid}-{start}-file",
        temp_root / f"phasegate-unit-{'0' * 8 if machine != '0' * 8 else '1' * 8}-{pid}-{start}-x",
        temp_root / f"phasegate-unit-{machine}-{pid}-{start}",
        temp_root / f"phasegate-unitx-{machine}-{pid}-{start}-y",
    ]
    planted[0].symlink_to(target)
    planted[1].write_text("not a folder")
    for folder in planted[2:]:
        folder.mkdir()

    assert sweep_dead("phasegate-unit") == [
        temp_root / f"phasegate-unit-{machine}-{pid}-{start}-moved"
    ]
    assert all(os.path.lexists(path) for path in planted)
    assert (target / "precious").read_text() == "kept"


@pytest.mark.parametrize(
    "prefix", ["", "phasegate", "other-unit", "phasegate-unit-", "phasegate-../x"]
)
def test_a_prefix_that_could_name_another_programs_folders_is_refused(prefix: str) -> None:
    with pytest.raises(ValueError, match="scratch prefix"):
        sweep_dead(prefix)


def test_a_dead_folder_named_before_the_padding_is_still_swept(temp_root: Path) -> None:
    """A folder named ``...-PID-START-...`` without zero-padding (an older phasegate's)."""
    child, (left,) = start_holder(temp_root, ["phasegate-unit"])
    kill_hard(child)
    machine, pid, start, rest = left.name.removeprefix("phasegate-unit-").split("-", 3)
    old = temp_root / f"phasegate-unit-{machine}-{int(pid)}-{int(start)}-{rest}"
    left.rename(old)

    assert sweep_dead("phasegate-unit") == [old]
