"""A service's temporary folders: a killed service leaves those of its runs and its own
behind; the next start removes them, and never the folder of a process still alive.

The services here get a temporary folder of their own: any other service started meanwhile
(another test worker's) would sweep the killed one's folders in the shared one first."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from phasegate._files.scratch import make_scratch, remove_scratch
from phasegate._server.job import RUN_SCRATCH
from tests.helpers.service import alive, descendants, running_service, wait_for_tool_call

pytestmark = pytest.mark.cli

WAIT = 60.0


def _scratch_of(temporary: Path, pids: set[int]) -> set[Path]:
    """The service scratch folders in ``temporary`` made by one of ``pids``."""
    return {
        path for path in temporary.glob("phasegate-serve-*")
        # PREFIX-MACHINE-PID-START-RANDOM (phasegate._files.scratch)
        if int(path.name.removeprefix("phasegate-serve-").removeprefix("run-").split("-")[1])
        in pids
    }  # fmt: skip


def test_the_next_start_removes_what_a_killed_service_left_and_keeps_a_live_folder(
    root: Path, tmp_path: Path
) -> None:
    script = root / "scripts" / "hang.yaml"
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    with running_service(root, "--model-script", script, temporary=temporary) as first:
        client = first.client()
        run = first.start_run(client, task="task.yaml", workdir="project")
        wait_for_tool_call(first, run["id"])
        processes = {first.process.pid, *descendants(first.process.pid)}
        left = _scratch_of(temporary, processes)
        first.process.send_signal(signal.SIGKILL)
        first.process.wait()
        deadline = time.monotonic() + WAIT
        while any(alive(pid) for pid in processes):
            assert time.monotonic() < deadline, "the killed service's processes lived on"
            time.sleep(0.05)
    # this test's process is alive: its folder stays
    live = make_scratch(RUN_SCRATCH, root=temporary)
    try:
        assert {p.name.startswith("phasegate-serve-run-") for p in left} == {True, False}
        assert all(path.is_dir() for path in left)
        with running_service(root, "--model-script", script, temporary=temporary) as second:
            swept = [path for path in left if path.exists()]
            second_pid = second.process.pid
            own = _scratch_of(temporary, {second_pid})
            assert second.signal(signal.SIGTERM) == 0
        assert live.is_dir()
    finally:
        remove_scratch(live)

    assert swept == []
    assert len(own) == 1
    assert _scratch_of(temporary, {second_pid}) == set()
