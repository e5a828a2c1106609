"""What a starting service makes of runs a crash left half-written on disk."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from phasegate._server.records import RunRecord, run_dir, save_record
from tests.helpers.service import events, running_service

pytestmark = pytest.mark.cli


def _record(run_id: str, seq: int, status: str, **fields: object) -> RunRecord:
    request = {"pipeline": "three.yaml", "workdir": "empty"}
    return RunRecord.model_validate({
        "id": run_id, "seq": seq, "kind": "pipeline", "name": "three", "status": status,
        "workdir": "empty", "isolation": "session", "created_at": "2026-11-23T09:00:00.000Z",
        "request": request, "request_digest": "d" * 64, **fields,
    })  # fmt: skip


def test_a_record_that_ended_without_its_done_gets_one_and_a_finished_run_is_finished(
    root: Path,
) -> None:
    """The service died between writing a run's end and its log's ``done``; another died
    after a run wrote its report but before it heard of it."""
    with running_service(root, "--model-script", root / "scripts" / "pipeline.yaml") as first:
        client = first.client()
        run = first.start_run(client, pipeline="three.yaml", workdir="empty")
        first.wait(client, run["id"])
    log = run_dir(root, run["id"]) / "events.jsonl"
    lines = log.read_text().splitlines()
    log.write_text("\n".join(lines[:-1]) + "\n")  # the done line never made it
    report = run_dir(root, run["id"]) / "report.json"
    save_record(root, _record("a00000000002", 2, "running", started_at="2026-11-23T09:00:01Z"))
    shutil.copy(report, run_dir(root, "a00000000002") / "report.json")

    with running_service(root) as second:
        client = second.client()
        repaired = events(client, run["id"], timeout=30)
        finished = client.get("/v1/runs/a00000000002").json()

    assert [e.event for e in repaired][-2:] == ["pipeline.completed", "done"]
    assert repaired[-1].json["status"] == "finished"
    assert (finished["status"], finished["verdict"]) == ("finished", "accepted")
    assert finished["report"]["verdict"] == "accepted"


def test_resuming_two_interrupted_pipelines_of_one_directory_runs_only_one(root: Path) -> None:
    for number in (1, 2):
        save_record(root, _record(f"b0000000000{number}", number, "running",
                                  started_at="2026-11-23T09:00:01Z"))  # fmt: skip
    with running_service(root, "--model-script", root / "scripts" / "hang.yaml") as service:
        client = service.client()
        statuses = [client.get(f"/v1/runs/b0000000000{n}").json() for n in (1, 2)]
        resumed = client.post("/v1/runs/b00000000001/resume")
        second = client.post("/v1/runs/b00000000002/resume")
        client.post("/v1/runs/b00000000001/cancel")

    assert [(s["status"], s["resumable"]) for s in statuses] == [("interrupted", True)] * 2
    assert resumed.status_code == 202
    assert second.status_code == 409
    assert json.loads(second.text)["error"]["code"] == "workdir_busy"
