"""Cancelling a run ends its agent's process group; at most --max-concurrent agents run."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.helpers.service import Service, alive, descendants, events, running_service

pytestmark = pytest.mark.cli


def _agent_cli(service: Service, timeout: float = 60) -> int:
    """The pid of the agent's CLI once a run has started it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for pid, command in descendants(service.process.pid).items():
            if "claude" in command.split(" ", 1)[0]:
                return pid
        time.sleep(0.05)
    raise AssertionError("no agent CLI started")


def test_cancelling_a_running_run_ends_its_cli_and_marks_it_cancelled(root: Path) -> None:
    with running_service(root, "--model-script", root / "scripts" / "hang.yaml") as service:
        client = service.client()
        run = service.start_run(client, task="task.yaml", workdir="project")
        cli = _agent_cli(service)

        asked = time.monotonic()
        answer = client.post(f"/v1/runs/{run['id']}/cancel")
        deadline = asked + 5
        while alive(cli) and time.monotonic() < deadline:
            time.sleep(0.05)

        assert not alive(cli), "the agent's CLI outlived the cancel by 5 s"
        assert answer.status_code == 200
        cancelled = answer.json()
        assert cancelled["status"] == "cancelled"
        assert cancelled["report"]["error"] == "the run was stopped before it finished"
        names = [e.event for e in events(client, run["id"])]
        assert names[-3:] == ["run.completed", "run.cancelled", "done"]
        again = client.post(f"/v1/runs/{run['id']}/cancel")
        assert again.status_code == 409
        assert again.json()["error"]["code"] == "run_ended"


def test_a_cancelled_run_of_a_reverting_task_leaves_the_work_directory_as_it_was(
    root: Path,
) -> None:
    task = root / "task.yaml"
    task.write_text(task.read_text() + "\non_reject: revert\n")
    with running_service(root, "--model-script", root / "scripts" / "hang.yaml") as service:
        client = service.client()
        run = service.start_run(client, task="task.yaml", workdir="project")
        _agent_cli(service)
        (root / "project" / "scratch.txt").write_text("made while the run ran\n")

        cancelled = client.post(f"/v1/runs/{run['id']}/cancel").json()

        assert cancelled["status"] == "cancelled"
        assert not (root / "project" / "scratch.txt").exists()


def test_twenty_runs_with_two_slots_all_finish_in_order_never_more_than_two_at_once(
    root: Path,
) -> None:
    with running_service(
        root, "--model-script", root / "scripts" / "task.yaml", "--max-concurrent", "2"
    ) as service:
        client = service.client()
        started = [
            service.start_run(client, task="task.yaml", workdir="project", copy_workdir=True)
            for _ in range(20)
        ]
        queued_first = [run["status"] for run in started]
        ended = [service.wait(client, run["id"], timeout=600) for run in started]

    assert queued_first[:2] == ["running", "running"]
    assert set(queued_first[2:]) == {"queued"}
    assert [run["status"] for run in ended] == ["finished"] * 20
    assert [run["verdict"] for run in ended] == ["accepted"] * 20
    assert len({run["id"] for run in ended}) == 20
    starts = [run["started_at"] for run in ended]
    assert starts == sorted(starts), "queued runs did not start in the order they came"
    moments = sorted(
        [(run["started_at"], 1) for run in ended] + [(run["finished_at"], -1) for run in ended],
        key=lambda m: (m[0], m[1]),
    )
    running, most = 0, 0
    for _, change in moments:
        running += change
        most = max(most, running)
    assert most == 2
    for run in ended:
        lines = service.log_lines(run["id"])
        assert sum('"event": "run.completed"' in line for line in lines) == 1
        assert lines[-1].startswith('{"event": "done"')


def test_a_queued_run_is_cancelled_without_starting(root: Path) -> None:
    with running_service(
        root, "--model-script", root / "scripts" / "hang.yaml", "--max-concurrent", "1"
    ) as service:
        client = service.client()
        first = service.start_run(client, task="task.yaml", workdir="project", copy_workdir=True)
        second = service.start_run(client, task="task.yaml", workdir="project", copy_workdir=True)

        cancelled = client.post(f"/v1/runs/{second['id']}/cancel").json()
        client.post(f"/v1/runs/{first['id']}/cancel")

        assert second["status"] == "queued"
        assert (cancelled["status"], cancelled["started_at"], cancelled["report"]) == (
            "cancelled", None, None,
        )  # fmt: skip
        names = [e.event for e in events(client, second["id"])]
        assert names == ["run.queued", "run.cancelled", "done"]
