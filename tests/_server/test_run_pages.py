"""``GET /v1/runs/{id}/view``: a recorded run's page, with the token like every route, its
policy as a header, written on demand; a run without a recording is a 404 in the problem
shape, a damaged one a 409 naming the file."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from phasegate._server.lifecycle import now
from phasegate._server.records import RECORDING, RunRecord, run_dir, save_record
from phasegate.recording.page import CSP, render_page
from tests.helpers.recording_fixtures import gate_run
from tests.helpers.service import running_service
from tests.helpers.service_app import in_process
from tests.helpers.service_root import make_root

RUN_ID = "aaaaaaaaaaaa"


def finished_run(root: Path, *, recorded: bool) -> Path:
    """A finished run's record in ``root``; its recording folder (made when ``recorded``)."""
    record = RunRecord(
        id=RUN_ID, seq=1, kind="task", name="t", status="finished", verdict="accepted",
        workdir="project", created_at=now(), request={}, request_digest="-",
    )  # fmt: skip
    save_record(root, record)
    folder = run_dir(root, RUN_ID) / RECORDING
    return gate_run(folder) if recorded else folder


def get(root: Path, *paths: str, token: bool = True) -> list[httpx.Response]:
    """The answers to GET ``paths`` from an in-process service of ``root``."""

    async def main() -> list[httpx.Response]:
        async with in_process(root) as running:
            headers = None if token else {"Authorization": ""}
            return [await running.client.get(path, headers=headers) for path in paths]

    return asyncio.run(main())


def test_a_recorded_run_serves_its_page_written_on_demand_with_its_policy(root: Path) -> None:
    folder = finished_run(root, recorded=True)

    page, info = get(root, f"/v1/runs/{RUN_ID}/view", f"/v1/runs/{RUN_ID}")

    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert page.headers["content-security-policy"] == f"{CSP}; frame-ancestors 'none'"
    assert page.headers["x-content-type-options"] == "nosniff"
    assert page.text == render_page(folder) == (folder / "index.html").read_text()
    assert info.json()["links"]["view"] == f"/v1/runs/{RUN_ID}/view"


def test_the_page_needs_the_token(root: Path) -> None:
    finished_run(root, recorded=True)

    (page,) = get(root, f"/v1/runs/{RUN_ID}/view", token=False)

    assert page.status_code == 401
    assert page.json()["error"]["code"] == "unauthorized"


def test_a_run_without_a_recording_is_a_404_and_has_no_view_link(root: Path) -> None:
    finished_run(root, recorded=False)

    page, info, missing = get(root, f"/v1/runs/{RUN_ID}/view", f"/v1/runs/{RUN_ID}",
                              "/v1/runs/bbbbbbbbbbbb/view")  # fmt: skip

    assert page.status_code == 404 and page.json()["error"]["code"] == "no_recording"
    assert info.json()["links"]["view"] is None
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "run_not_found"


def test_a_damaged_recording_is_a_409_naming_the_file_relative_to_the_root(root: Path) -> None:
    folder = finished_run(root, recorded=True)
    (folder / "checks.jsonl").write_text("{")

    (page,) = get(root, f"/v1/runs/{RUN_ID}/view")

    assert page.status_code == 409
    error = page.json()["error"]
    assert error["code"] == "recording_unreadable"
    assert error["message"].startswith(f".phasegate/runs/{RUN_ID}/recording/checks.jsonl: line 1")
    assert str(root.resolve()) not in error["message"]


def test_a_recording_folder_that_is_a_link_is_no_recording(root: Path, tmp_path: Path) -> None:
    elsewhere = gate_run(tmp_path / "elsewhere")
    folder = finished_run(root, recorded=False)
    folder.symlink_to(elsewhere)

    (page,) = get(root, f"/v1/runs/{RUN_ID}/view")

    assert page.status_code == 404
    assert not (elsewhere / "index.html").exists()


@pytest.mark.cli
def test_a_real_run_of_the_service_records_itself_and_serves_its_page(tmp_path: Path) -> None:
    """A run through the service (the real CLI against the scripted model server) records
    into its folder by default; its links name the page, which is the page of that folder."""
    root = make_root(tmp_path / "root")
    with running_service(root, "--model-script", root / "scripts" / "task.yaml") as service:
        client = service.client()
        run = service.start_run(client, task="task.yaml", workdir="project", copy_workdir=True)
        ended = service.wait(client, run["id"])
        page = client.get(ended["links"]["view"])

    assert ended["verdict"] == "accepted"
    assert page.status_code == 200, page.text
    folder = run_dir(root, run["id"]) / RECORDING
    assert page.text == render_page(folder)
    assert "Phase 1 · edit" in page.text
