"""The service under long paths: a 150-character ``TMPDIR`` (a Mac's is about 49, past what
the fork server's socket used to take) and a 150-character root: runs, a pipeline with a
process per stage, kill -9 and a resume. Where the socket goes: tests/_process/."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from tests.helpers.service import Service, events, running_service
from tests.helpers.service_root import make_root

LONG = 150


def _long_folder(base: Path, name: str) -> Path:
    """A new folder under ``base`` whose path is :data:`LONG` characters, or longer when
    ``base`` already is (the suite itself may run under a long ``TMPDIR``)."""
    pad = max(1, LONG - len(str(base)) - len(name) - 2)
    folder = base / ("p" * pad) / name
    folder.mkdir(parents=True)
    assert len(str(folder)) >= LONG
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
