"""A run whose end cannot be written (a full disk, an immutable folder) still ends: its
verdict is kept, every stream gets ``done``, the failure is logged and shown in the run's
``error``, and a restart finds how it ended."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import logging
import signal
import time
from pathlib import Path
from typing import Any

import pytest

import phasegate._server.service
from phasegate._server.event_files import append_lines, last_event
from phasegate._server.lifecycle import ENDED, Ending
from phasegate._server.records import RunRecord, run_dir, save_record
from tests.helpers.read_only import read_only
from tests.helpers.service import (
    alive,
    descendants,
    events,
    running_service,
    wait_for_tool_call,
)
from tests.helpers.service_app import in_process, in_process_service

WAIT = 60.0


def _full_disk(*_: Any) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_run_whose_record_and_log_cannot_take_its_end_still_ends_with_done_and_says_why(
    root: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def judged(*_: Any) -> Ending:
        return Ending("finished", changes={"verdict": "accepted"})

    def save_unless_ended(where: Path, record: RunRecord) -> None:
        if record.status in ENDED:
            _full_disk()
        save_record(where, record)

    def append_until_done(path: Path, lines: list[str]) -> None:
        if any('"event": "done"' in line for line in lines):
            _full_disk()
        append_lines(path, lines)

    service_module = phasegate._server.service
    monkeypatch.setattr(service_module, "execute", judged)
    monkeypatch.setattr(service_module, "save_record", save_unless_ended)
    monkeypatch.setattr(service_module, "append_lines", append_until_done)

    async def main() -> tuple[dict[str, Any], str, BaseException | None]:
        async with in_process(root, max_concurrent=1) as running:
            client = running.client
            started = await client.post(
                "/v1/runs", json={"task": "task.yaml", "workdir": "project"}
            )
            live = running.service.runs[started.json()["id"]]
            assert live.task is not None
            await asyncio.wait_for(asyncio.shield(live.task), WAIT)
            stream = await asyncio.wait_for(client.get(f"/v1/runs/{live.record.id}/events"), WAIT)
            info = await client.get(f"/v1/runs/{live.record.id}")
            return info.json(), stream.text, live.task.exception()

    with caplog.at_level(logging.ERROR, logger="phasegate.serve"):
        info, stream, failure = asyncio.run(main())

    assert failure is None
    assert (info["status"], info["verdict"]) == ("finished", "accepted")
    assert info["error"] == "the service could not save the run's end: No space left on device"
    last = set(stream.strip().split("\n\n")[-1].splitlines())
    assert {"id: 2", "event: done"} <= last
    assert any(line.startswith("data: ") and '"status": "finished"' in line for line in last)
    logged = [r.getMessage() for r in caplog.records if r.name == "phasegate.serve"]
    assert any("could not be saved" in line for line in logged)
    assert any("event log could not be extended" in line for line in logged)
    on_disk = RunRecord.model_validate_json((run_dir(root, info["id"]) / "record.json").read_text())
    assert on_disk.status == "running"


@pytest.mark.cli
def test_a_run_whose_report_and_record_cannot_be_written_keeps_its_verdict_across_a_restart(
    root: Path,
) -> None:
    script = root / "scripts" / "hang.yaml"
    with running_service(root, "--model-script", script) as first:
        client = first.client()
        run = first.start_run(client, task="task.yaml", workdir="project")
        wait_for_tool_call(first, run["id"])
        with read_only(run_dir(root, run["id"])):
            cancelled = client.post(f"/v1/runs/{run['id']}/cancel").json()
            streamed = events(client, run["id"])
    judged = [line for line in first.log_lines(run["id"]) if '"run.completed"' in line]
    with running_service(root, "--model-script", script) as second:
        after = second.client().get(f"/v1/runs/{run['id']}").json()

    assert cancelled["status"] == "cancelled"
    assert cancelled["verdict"] is not None
    assert f'"verdict": "{cancelled["verdict"]}"' in judged[-1]
    assert "its report could not be saved" in cancelled["error"]
    assert "the service could not save the run's end" in cancelled["error"]
    assert [e.event for e in streamed][-2:] == ["run.cancelled", "done"]
    assert any("could not be saved" in line for line in first.said)
    assert (after["status"], after["verdict"]) == ("cancelled", cancelled["verdict"])
    assert "could not save this run's end" in after["error"]


def test_a_restart_finds_the_verdict_of_a_run_judged_before_its_report_and_end_were_lost(
    root: Path,
) -> None:
    record = RunRecord(
        id="c00000000001", seq=1, kind="task", name="fix-vulnerability", status="running",
        workdir="project", mode="gate", created_at="2026-11-23T09:00:00.000Z",
        started_at="2026-11-23T09:00:01.000Z", request={}, request_digest="-",
    )  # fmt: skip
    save_record(root, record)
    common = {"run_id": record.id, "task": record.name, "mode": "gate"}
    lines = [
        json.dumps({"event": "run.queued", **common}),
        json.dumps({"event": "run.started", **common}),
        json.dumps({"event": "run.completed", **common, "verdict": "rejected"}),
    ]
    (run_dir(root, record.id) / "events.jsonl").write_text("\n".join(lines) + "\n")

    live = in_process_service(root).runs[record.id]

    assert (live.record.status, live.record.verdict) == ("finished", "rejected")
    assert live.record.error is not None and "report was not saved" in live.record.error
    assert last_event(run_dir(root, record.id) / "events.jsonl") == "done"


@pytest.mark.cli
def test_a_run_that_cannot_write_anything_of_its_end_is_told_on_stderr_and_leaves_no_process(
    root: Path,
) -> None:
    script = root / "scripts" / "hang.yaml"
    with running_service(root, "--model-script", script) as service:
        client = service.client()
        run = service.start_run(client, task="task.yaml", workdir="project")
        wait_for_tool_call(service, run["id"])
        processes = {service.process.pid, *descendants(service.process.pid)}
        folder = run_dir(root, run["id"])
        with contextlib.ExitStack() as frozen:  # its own output (process.log) included
            for path in [*folder.iterdir(), folder]:
                frozen.enter_context(read_only(path))
            cancelled = client.post(f"/v1/runs/{run['id']}/cancel").json()
            streamed = [e.event for e in events(client, run["id"])]
            assert service.signal(signal.SIGTERM) == 0
        deadline = time.monotonic() + 30
        while (left := [pid for pid in processes if alive(pid)]) and time.monotonic() < deadline:
            time.sleep(0.05)

    told = [line for line in service.said if line.startswith(f"run {run['id']} ended without")]
    assert cancelled["status"] == "cancelled" and streamed[-1] == "done"
    assert len(told) == 1, service.said
    assert str(folder / "report.json") in told[0]
    assert "the error file could not be written either" in told[0]
    assert "the error file could not be written either" in cancelled["error"]
    assert left == [], {pid: descendants(pid) for pid in left}
