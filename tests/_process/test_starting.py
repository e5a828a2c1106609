"""Where worker processes come from (:mod:`phasegate._process.starting`): the start method,
the folder the fork server's socket fits in, and the commands that say at once that a
platform cannot run them."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from phasegate._process import starting
from phasegate._process.starting import (
    SOCKET_PATH_LIMIT,
    socket_fits,
    socket_folder_base,
    start_method,
)
from phasegate.errors import UsageError
from tests.helpers.cli import run_main


def _long_folder(base: Path, name: str, length: int = 150) -> Path:
    """A new folder under ``base`` whose path is ``length`` characters, or longer when
    ``base`` already is (the suite itself may run under a long ``TMPDIR``)."""
    folder = base / ("p" * max(1, length - len(str(base)) - len(name) - 2)) / name
    folder.mkdir(parents=True)
    assert len(str(folder)) >= length
    return folder


@pytest.fixture
def short_folder() -> Iterator[Path]:
    """A new folder in /tmp, short whatever ``TMPDIR`` is."""
    folder = Path(tempfile.mkdtemp(dir="/tmp"))
    yield folder
    shutil.rmtree(folder)


def test_the_temporary_folder_holds_the_socket_when_it_is_short_enough(
    short_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(short_folder))
    assert socket_fits(short_folder, 1 + 50 + starting.SOCKET_SUFFIX)

    assert socket_folder_base(50) == short_folder


def test_a_long_temporary_folder_gives_way_to_a_short_system_folder(
    tmp_path: Path, short_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = short_folder
    monkeypatch.setattr(starting, "SHORT_FOLDERS", ("/no/such/folder", str(short)))
    monkeypatch.setattr("tempfile.tempdir", str(_long_folder(tmp_path, "tmp")))

    base = socket_folder_base(10)

    assert base == short
    assert len(os.fsencode(str(base))) + 1 + 10 + starting.SOCKET_SUFFIX < SOCKET_PATH_LIMIT


def test_with_no_short_folder_the_error_names_the_path_the_limit_and_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    long = _long_folder(tmp_path, "tmp")
    monkeypatch.setattr(starting, "SHORT_FOLDERS", ("/no/such/folder",))
    monkeypatch.setattr("tempfile.tempdir", str(long))

    with pytest.raises(UsageError) as raised:
        socket_folder_base(10)

    message = str(raised.value)
    assert str(long) in message
    assert f"allows {SOCKET_PATH_LIMIT - 1}" in message
    assert "set TMPDIR to a folder of at most" in message
    assert "PHASEGATE_START_METHOD=spawn" in message


def test_the_start_method_is_the_fork_server_where_there_is_one_unless_spawn_is_forced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("PHASEGATE_START_METHOD", raising=False)
    default = start_method()
    monkeypatch.setenv("PHASEGATE_START_METHOD", "spawn")
    forced = start_method()
    monkeypatch.setenv("PHASEGATE_START_METHOD", "vfork")
    with pytest.raises(UsageError, match="PHASEGATE_START_METHOD='vfork' is not a start method"):
        start_method()

    has_fork_server = "forkserver" in multiprocessing.get_all_start_methods()
    assert default == ("forkserver" if has_fork_server else "spawn")
    assert forced == "spawn"


@pytest.mark.parametrize(
    ("args", "command"),
    [
        (("serve", "--root", "."), "phasegate serve"),
        (
            ("batch", "run", "batch.yaml", "--out", "out"),
            "phasegate batch run (the local executor)",
        ),
    ],
)
def test_on_a_platform_without_process_groups_serve_and_local_batches_refuse_in_one_line(
    args: tuple[str, ...],
    command: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "batch.yaml").write_text("task: task.yaml\nunits: []\n")
    monkeypatch.setattr(starting, "_POSIX", False)

    result = run_main(capsys, *args)

    assert result.code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"{command} is not supported on" in lines[0]
    assert "WSL" in lines[0]
