"""A service killed or stopped: finished runs survive, unfinished ones are interrupted, and an
interrupted pipeline resumes where it was."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import httpx
import pytest

from phasegate._server.records import RunRecord
from tests.helpers.service import Service, events, running_service

pytestmark = pytest.mark.cli


def _wait_for_status(client: httpx.Client, run_id: str, status: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while client.get(f"/v1/runs/{run_id}").json()["status"] != status:
        assert time.monotonic() < deadline, f"run {run_id} never became {status}"
        time.sleep(0.05)


def _wait_for_stage_two(service: Service, run_id: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not any(
        '"stage.started"' in line and '"stage": 2' in line for line in service.log_lines(run_id)
    ):
        assert time.monotonic() < deadline, "the pipeline never reached stage 2"
        time.sleep(0.05)


def test_after_kill_9_finished_runs_are_served_and_unfinished_ones_interrupted(
    root: Path,
) -> None:
    scripts = root / "scripts"
    with running_service(root, "--model-script", scripts / "task.yaml") as first:
        client = first.client()
        done = first.start_run(client, task="task.yaml", workdir="project", copy_workdir=True)
        before = first.wait(client, done["id"])
        history = events(client, done["id"])
    with running_service(root, "--model-script", scripts / "hang-in-stage-two.yaml") as second:
        client = second.client()
        cut = second.start_run(client, pipeline="three.yaml", workdir="empty")
        _wait_for_stage_two(second, cut["id"])
        assert second.signal(signal.SIGKILL) == -signal.SIGKILL

    with running_service(root, "--model-script", scripts / "resume.yaml") as third:
        client = third.client()
        served = client.get(f"/v1/runs/{done['id']}").json()
        replayed = events(client, done["id"])
        interrupted = client.get(f"/v1/runs/{cut['id']}").json()
        cut_events = [e.event for e in events(client, cut["id"])]

        assert served == before
        assert replayed == history
        assert (interrupted["status"], interrupted["resumable"]) == ("interrupted", True)
        assert interrupted["links"]["resume"] == f"/v1/runs/{cut['id']}/resume"
        assert cut_events[-2:] == ["run.interrupted", "done"]
        assert "pipeline.completed" not in cut_events

        resumed = client.post(f"/v1/runs/{cut['id']}/resume")
        assert resumed.status_code == 202 and resumed.json()["status"] in ("queued", "running")
        finished = third.wait(client, cut["id"])
        names = [e.event for e in events(client, cut["id"])]

        assert (finished["status"], finished["verdict"]) == ("finished", "accepted")
        assert sorted(p.name for p in (root / "empty").glob("*.md")) == [
            "one.md", "three.md", "two.md",
        ]  # fmt: skip
        assert names.count("done") == 2 and names[-1] == "done"
        assert "pipeline.resumed" in names[names.index("done") :]
        again = client.post(f"/v1/runs/{done['id']}/resume")
        assert again.status_code == 409
        assert again.json()["error"]["code"] == "not_resumable"


def test_sigterm_interrupts_what_runs_closes_its_streams_and_exits_cleanly(
    root: Path,
) -> None:
    with running_service(
        root, "--model-script", root / "scripts" / "hang.yaml", "--max-concurrent", "1",
        "--grace", "0",
    ) as service:  # fmt: skip
        client = service.client()
        running = service.start_run(client, task="task.yaml", workdir="project", copy_workdir=True)
        waiting = service.start_run(client, task="task.yaml", workdir="project", copy_workdir=True)
        _wait_for_status(client, running["id"], "running")
        with client.stream("GET", f"/v1/runs/{running['id']}/events") as stream:
            service.process.send_signal(signal.SIGTERM)
            names = [
                line.removeprefix("event: ")
                for line in stream.iter_lines()
                if line.startswith("event: ")
            ]
        code = service.process.wait(timeout=60)

    assert code == 0
    assert names[-2:] == ["run.interrupted", "done"]
    assert "phasegate serve: stopped" in service.said
    for run, status in ((running, "interrupted"), (waiting, "interrupted")):
        record = (root / ".phasegate" / "runs" / run["id"] / "record.json").read_text()
        assert f'"status": "{status}"' in record
    waited = RunRecord.model_validate_json(
        (root / ".phasegate" / "runs" / waiting["id"] / "record.json").read_bytes()
    )
    assert waited.resumable
