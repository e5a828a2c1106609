"""Files under the root never stall the service: a FIFO is refused at once, and reading a
definition happens in a worker thread outside the service's lock, so other requests,
``/healthz`` and a shutdown go on while one read is slow."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

import phasegate._server.execution
import phasegate._server.service
from phasegate._server.lifecycle import now
from phasegate._server.records import (
    EVENTS,
    RECORD,
    REPORT,
    RunRecord,
    run_dir,
    runs_dir,
    save_record,
)
from phasegate._server.resolving import ResolvedRequest, resolve_request
from tests.helpers.service import running_service
from tests.helpers.service_app import in_process

WAIT = 30.0
"""Seconds any awaited answer may take before the test fails (a hang, not a slow machine)."""
HOLD = 10.0
"""Seconds a held read waits for its release before it goes on by itself (and the test,
seeing it was not released, fails): a service that waited for it still ends the test."""


@dataclass
class Held:
    """Reads held until :attr:`release`; :attr:`entered` once one is held; whether each was
    released (True) or gave up waiting (False)."""

    release: threading.Event = field(default_factory=threading.Event)
    entered: threading.Event = field(default_factory=threading.Event)
    released: list[bool] = field(default_factory=list)

    def around(self, original: Any) -> Any:
        """``original`` (resolve_request), held for the work directory ``project``."""

        def resolve(root: Path, request: Any) -> ResolvedRequest:
            if request.workdir == "project":
                self.entered.set()
                self.released.append(self.release.wait(HOLD))
            return original(root, request)  # type: ignore[no-any-return]

        return resolve


@pytest.fixture
def held() -> Iterator[Held]:
    """Held reads, released after the test whatever happens."""
    reads = Held()
    yield reads
    reads.release.set()


@pytest.mark.cli
def test_a_fifo_as_a_schema_or_prompt_file_is_400_naming_it_and_the_service_goes_on(
    root: Path,
) -> None:
    os.mkfifo(root / "schema.json")
    os.mkfifo(root / "prompt.md")
    task = {"name": "t", "phases": [{"name": "p", "instructions": "x",
                                     "output_schema": "schema.json"}]}  # fmt: skip
    stages = [{"name": "s", "prompt_file": "prompt.md", "exit_when": [{"file_exists": "x"}]}]
    pipeline = {"name": "p", "stages": stages}
    with running_service(root, "--model-script", root / "scripts" / "task.yaml") as service:
        client = service.client()
        answers = [
            client.post(path, json={kind: definition, "workdir": "project"})
            for path in ("/v1/runs", "/v1/plans")
            for kind, definition in (("task", task), ("pipeline", pipeline))
        ]
        healthy = httpx.get(service.url + "/healthz", timeout=WAIT)
        after = client.post("/v1/runs", json={"task": "task.yaml", "workdir": "project"})
        code = service.signal(signal.SIGTERM)

    for answer in answers:
        assert answer.status_code == 400, answer.text
        message = answer.json()["error"]["message"]
        assert "is a FIFO (named pipe), not a regular file" in message
        assert "schema.json" in message or "prompt.md" in message
    assert healthy.json()["status"] == "ok"
    assert after.status_code == 202
    assert code == 0


def test_a_slow_definition_read_holds_up_neither_other_requests_nor_healthz(
    root: Path, held: Held, monkeypatch: pytest.MonkeyPatch
) -> None:
    service_module = phasegate._server.service
    monkeypatch.setattr(service_module, "resolve_request",
                        held.around(resolve_request))  # fmt: skip

    async def main() -> tuple[int, int, int]:
        async with in_process(root) as running:
            client = running.client
            slow = asyncio.create_task(
                client.post("/v1/runs", json={"task": "task.yaml", "workdir": "project"})
            )
            assert await asyncio.to_thread(held.entered.wait, WAIT)
            health = await asyncio.wait_for(client.get("/healthz"), WAIT)
            other = await asyncio.wait_for(
                client.post("/v1/runs", json={"task": "task.yaml", "workdir": "empty"}), WAIT
            )
            held.release.set()
            first = await asyncio.wait_for(slow, WAIT)
            return health.status_code, other.status_code, first.status_code

    assert asyncio.run(main()) == (200, 202, 202)
    assert held.released == [True]


def test_a_queued_run_whose_definition_is_read_again_slowly_leaves_the_event_loop_free(
    root: Path, held: Held, monkeypatch: pytest.MonkeyPatch
) -> None:
    execution = phasegate._server.execution
    monkeypatch.setattr(execution, "resolve_request",
                        held.around(resolve_request))  # fmt: skip

    async def main() -> tuple[int, str]:
        async with in_process(root, max_concurrent=1) as running:
            client = running.client
            # The run's process is never started: its definition is gone once it is read.
            body = {"task": "task.yaml", "workdir": "project"}
            started = await client.post("/v1/runs", json=body)
            (root / "task.yaml").unlink()
            assert await asyncio.to_thread(held.entered.wait, WAIT)
            health = await asyncio.wait_for(client.get("/healthz"), WAIT)
            held.release.set()
            live = running.service.runs[started.json()["id"]]
            assert live.task is not None
            await asyncio.wait_for(live.task, WAIT)
            return health.status_code, live.record.status

    assert asyncio.run(main()) == (200, "failed")
    assert held.released == [True]


def test_fifos_in_place_of_the_service_s_own_files_are_skipped_not_waited_on(root: Path) -> None:
    record = RunRecord(
        id="aaaaaaaaaaaa", seq=1, kind="task", name="t", status="finished", verdict="accepted",
        workdir="project", created_at=now(), request={}, request_digest="-",
    )  # fmt: skip
    save_record(root, record)
    os.mkfifo(run_dir(root, record.id) / REPORT)
    os.mkfifo(run_dir(root, record.id) / EVENTS)
    (runs_dir(root) / "bbbbbbbbbbbb").mkdir()
    os.mkfifo(runs_dir(root) / "bbbbbbbbbbbb" / RECORD)

    async def main() -> tuple[httpx.Response, httpx.Response, int, list[str]]:
        async with in_process(root) as running:
            client = running.client
            info = await asyncio.wait_for(client.get(f"/v1/runs/{record.id}"), WAIT)
            stream = await asyncio.wait_for(client.get(f"/v1/runs/{record.id}/events"), WAIT)
            health = await asyncio.wait_for(client.get("/healthz"), WAIT)
            return info, stream, health.status_code, running.service.unreadable

    info, stream, health, unreadable = asyncio.run(main())
    assert (info.json()["status"], info.json()["report"]) == ("finished", None)
    assert "event: done" in stream.text
    assert health == 200
    assert any("bbbbbbbbbbbb" in line and "FIFO" in line for line in unreadable)
