"""The Ray executor on a real local Ray cluster, with real-CLI units against the scripted
model server; a worker killed mid-unit, and the unit run again by Ray."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from phasegate.errors import UsageError
from phasegate.batches.loading import Batch, load_batch
from phasegate.batches.ray_executor import RayExecutor
from phasegate.batches.runner import BatchRunner, BatchSummary
from tests.helpers.batches import WriteBatch
from tests.helpers.ray_agents import HANG, HangOnce

pytestmark = [pytest.mark.ray, pytest.mark.cli]

REPOSITORY = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def cluster() -> Iterator[RayExecutor]:
    """One local cluster of 2 CPUs for the module; its workers can import tests.helpers."""
    ray = pytest.importorskip("ray")
    if ray.is_initialized():
        ray.shutdown()
    executor = RayExecutor(
        num_cpus=2, runtime_env={"env_vars": {"PYTHONPATH": str(REPOSITORY)}}, max_retries=2
    )
    yield executor
    executor.close()


@pytest.fixture
def batch(write_batch: WriteBatch) -> Batch:
    """Three real-CLI units of the example: gate, single-query and unstructured."""
    item = {
        "task": "example/task.yaml",
        "workdir": "example/project",
        "model_script": "example/model.yaml",
        "modes": ["gate", "single-query", "unstructured"],
    }
    return load_batch(write_batch([item]))


def records(out: Path) -> dict[str, dict[str, Any]]:
    return {p.parent.name: json.loads(p.read_text()) for p in (out / "units").glob("*/unit.json")}


def test_units_run_in_ray_workers_and_come_back_with_their_files(
    cluster: RayExecutor, batch: Batch, tmp_path: Path
) -> None:
    summary = BatchRunner(cluster, concurrency=2).run_sync(batch, tmp_path / "out")
    found = records(tmp_path / "out")
    assert summary.complete and set(found) == {unit.id for unit in batch.units}
    assert {r["unit"]["mode"]: r["outcome"]["verdict"] for r in found.values()} == {
        "gate": "accepted", "single-query": "rejected", "unstructured": "rejected",
    }  # fmt: skip
    workers = {int(r["outcome"]["worker"].rsplit(":", 1)[1]) for r in found.values()}
    assert os.getpid() not in workers
    for unit_id in found:
        files = {p.name for p in (tmp_path / "out" / "units" / unit_id).iterdir()}
        assert files == {"unit.json", "report.json", "events.jsonl", "transcript.json"}


def test_a_worker_killed_mid_unit_is_retried_by_ray_and_every_unit_ends_once(
    cluster: RayExecutor, batch: Batch, tmp_path: Path
) -> None:
    hang = tmp_path / "hang.yaml"
    hang.write_text(HANG)
    pid_file = tmp_path / "hung-worker.pid"
    victim = batch.units[0]
    agents = HangOnce(victim.id, str(pid_file), str(hang))

    async def run_and_kill() -> BatchSummary:
        running = asyncio.ensure_future(
            BatchRunner(cluster, agents=agents, concurrency=2).run(batch, tmp_path / "out")
        )
        for _ in range(1200):  # the hung attempt has started once its pid is written
            if pid_file.exists() and pid_file.read_text():
                break
            await asyncio.sleep(0.05)
        os.kill(int(pid_file.read_text()), signal.SIGKILL)
        return await running

    summary = asyncio.run(run_and_kill())
    found = records(tmp_path / "out")
    assert summary.complete and sorted(summary.ran) == sorted(u.id for u in batch.units)
    assert set(found) == {unit.id for unit in batch.units}
    retried = found[victim.id]["outcome"]
    assert retried["verdict"] == "accepted"
    assert retried["worker"].rsplit(":", 1)[1] != pid_file.read_text()


def test_without_ray_installed_the_executor_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(UsageError, match=r"pip install 'phasegate\[ray\]'") as raised:
        RayExecutor()
    assert raised.value.option == "executor"


def test_an_address_nothing_answers_on_is_refused_at_once_saying_what_to_do() -> None:
    pytest.importorskip("ray")
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]  # closed again before the executor tries it
    with pytest.raises(UsageError, match=rf"no Ray cluster answers at 127.0.0.1:{port}") as raised:
        RayExecutor(f"127.0.0.1:{port}")
    assert raised.value.option == "address"
