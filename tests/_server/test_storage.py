"""The service's own folder under the root: never written through a planted link, and a
folder it cannot write (read-only, full) is a clear answer, never a traceback."""

from __future__ import annotations

import os
import time
from pathlib import Path

import httpx
import pytest

from phasegate._server.records import RunRecord, save_record
from tests.helpers.cli import phasegate
from tests.helpers.read_only import read_only
from tests.helpers.service import Service, running_service

pytestmark = pytest.mark.cli

WAIT = 30.0


def _contents(folder: Path) -> dict[str, bytes]:
    """Every file below ``folder`` and what it holds."""
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def _said_once(service: Service, words: str) -> list[str]:
    """The lines of the service's stderr holding ``words``, once one came."""
    deadline = time.monotonic() + WAIT
    while not (found := [line for line in service.said if words in line]):
        assert time.monotonic() < deadline, f"the service never said {words!r}"
        time.sleep(0.05)
    return found


def test_a_runs_folder_that_cannot_be_written_is_503_storage_failed_logged_once(
    root: Path,
) -> None:
    with running_service(root, "--model-script", root / "scripts" / "task.yaml") as service:
        client = service.client()
        body = {"task": "task.yaml", "workdir": "project", "copy_workdir": True}
        with read_only(root / ".phasegate" / "runs"):
            refused = client.post("/v1/runs", json=body)
            healthy = httpx.get(service.url + "/healthz")
        logged = _said_once(service, "could not write")
        accepted = client.post("/v1/runs", json=body)

    assert refused.status_code == 503, refused.text
    error = refused.json()["error"]
    assert error["code"] == "storage_failed"
    assert "Operation not permitted" in error["message"] or "denied" in error["message"]
    assert str(root) not in refused.text
    assert healthy.json()["status"] == "ok"
    assert len(logged) == 1
    assert not any("Traceback" in line for line in service.said)
    assert accepted.status_code == 202


def test_a_root_where_the_service_cannot_make_its_folder_is_exit_2_naming_it(root: Path) -> None:
    with read_only(root):
        done = phasegate("serve", "--root", root, "--port", "0")
    assert done.returncode == 2, done.stderr
    assert "cannot keep the service's runs" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("linked", [".phasegate", ".phasegate/runs"])
def test_a_link_planted_as_the_service_s_folder_is_refused_and_nothing_outside_changes(
    root: Path, tmp_path: Path, linked: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "kept.txt").write_text("mine")
    (root / linked).parent.mkdir(exist_ok=True)
    (root / linked).symlink_to(outside, target_is_directory=True)
    before = _contents(outside)
    mode = outside.stat().st_mode

    done = phasegate("serve", "--root", root, "--port", "0")

    assert done.returncode == 2, done.stderr
    assert f"{linked} is a symbolic link" in done.stderr
    assert "Traceback" not in done.stderr
    assert _contents(outside) == before
    assert outside.stat().st_mode == mode


def test_a_run_folder_that_is_a_link_is_no_run_and_what_it_points_at_is_left_alone(
    root: Path, tmp_path: Path
) -> None:
    """A run ``running`` when the service stopped would be ended (its record rewritten, its
    log extended): through a planted link that would write outside the root."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    save_record(elsewhere, RunRecord(
        id="d00000000001", seq=1, kind="task", name="t", status="running", workdir="project",
        created_at="2026-11-23T09:00:00.000Z", request={}, request_digest="-",
    ))  # fmt: skip
    target = elsewhere / ".phasegate" / "runs" / "d00000000001"
    (target / "events.jsonl").write_text('{"event": "run.started", "run_id": "d00000000001"}\n')
    before = _contents(elsewhere)
    (root / ".phasegate" / "runs").mkdir(parents=True)
    (root / ".phasegate" / "runs" / "d00000000001").symlink_to(target, target_is_directory=True)

    with running_service(root) as service:
        answer = service.client().get("/v1/runs/d00000000001")

    assert answer.status_code == 404
    assert _contents(elsewhere) == before


def test_an_idempotency_folder_that_is_a_link_is_503_and_nothing_is_written_through_it(
    root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    with running_service(root, "--model-script", root / "scripts" / "task.yaml") as service:
        (root / ".phasegate" / "idempotency").symlink_to(outside, target_is_directory=True)
        answer = service.client().post(
            "/v1/runs",
            json={"task": "task.yaml", "workdir": "project", "copy_workdir": True},
            headers={"Idempotency-Key": "order-1"},
        )

    assert answer.status_code == 503, answer.text
    assert answer.json()["error"]["code"] == "storage_failed"
    assert "idempotency is a symbolic link" in answer.json()["error"]["message"]
    assert os.listdir(outside) == []
