"""The service under long paths: a 150-character ``TMPDIR`` (a Mac's is about 49, past what
the fork server's socket used to take) and a 150-character root. The fork server's socket
goes in a short folder of its own; where none is, the error names the path, the limit and
what to do."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
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
from tests.helpers.service import Service, events, running_service
from tests.helpers.service_root import make_root

LONG = 150


def _long_folder(base: Path, name: str) -> Path:
    """A new folder under ``base`` whose path is exactly :data:`LONG` characters."""
    pad = LONG - len(str(base)) - len(name) - 2
    assert pad > 0, f"{base} is already too long for a {LONG}-character folder"
    folder = base / ("p" * pad) / name
    folder.mkdir(parents=True)
    assert len(str(folder)) == LONG
    return folder


def _wait_for_stage_two(service: Service, run_id: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not any(
        '"stage.started"' in line and '"stage": 2' in line for line in service.log_lines(run_id)
    ):
        assert time.monotonic() < deadline, "the pipeline never reached stage 2"
        time.sleep(0.05)


@pytest.mark.cli
def test_the_service_runs_tasks_and_pipelines_and_survives_kill_9_under_long_temp_and_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    temp = _long_folder(tmp_path, "tmp")
    monkeypatch.setenv("TMPDIR", str(temp))
    root = make_root(_long_folder(tmp_path, "root"))
    scripts = root / "scripts"
    with running_service(root, "--model-script", scripts / "task.yaml") as first:
        client = first.client()
        task = first.start_run(client, task="task.yaml", workdir="project", copy_workdir=True)
        finished = first.wait(client, task["id"])
    with running_service(root, "--model-script", scripts / "hang-in-stage-two.yaml") as second:
        client = second.client()
        cut = second.start_run(client, pipeline="three.yaml", workdir="empty", isolation="process")
        _wait_for_stage_two(second, cut["id"])
        assert second.signal(signal.SIGKILL) == -signal.SIGKILL
    with running_service(root, "--model-script", scripts / "resume.yaml") as third:
        client = third.client()
        resumed = client.post(f"/v1/runs/{cut['id']}/resume")
        assert resumed.status_code == 202, resumed.text
        ended = third.wait(client, cut["id"])
        streamed = [e.event for e in events(client, cut["id"])]

    assert (finished["status"], finished["verdict"]) == ("finished", "accepted")
    assert (ended["status"], ended["verdict"]) == ("finished", "accepted")
    assert "pipeline.resumed" in streamed and streamed[-1] == "done"
    assert sorted(p.name for p in (root / "empty").glob("*.md")) == [
        "one.md", "three.md", "two.md",
    ]  # fmt: skip
    # Nothing of the services is left in the temporary folder or the short one.
    assert not [p for p in temp.iterdir() if p.name.startswith(("phasegate-", "pymp-"))]


def test_the_temporary_folder_holds_the_socket_when_it_is_short_enough(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    if not socket_fits(tmp_path, 1 + 1 + starting.SOCKET_SUFFIX):
        pytest.skip(f"the test's own temporary folder {tmp_path} is already too long")

    assert socket_folder_base(1) == tmp_path


def test_a_long_temporary_folder_gives_way_to_a_short_system_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = tmp_path / "s"
    short.mkdir()
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
