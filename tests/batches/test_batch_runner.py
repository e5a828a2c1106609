"""The batch runner's scheduling, on a fake executor: bounds, resume, retry, cost cap, stop."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from phasegate.batches.executor import ExecutorError
from phasegate.batches.loading import Batch, load_batch
from phasegate.batches.outcome import UnitJob, UnitOutcome
from phasegate.batches.progress import BatchUpdate
from phasegate.batches.runner import BatchRunner
from tests.helpers.batches import WriteBatch

ITEM = {"task": "example/task.yaml", "workdir": "example/project"}


class FakeExecutor:
    """Ends each unit with ``verdict(unit id)``, costing ``cost``; ``hold`` keeps every unit
    running until released; records what ran and what was cancelled."""

    name = "fake"

    def __init__(self, verdict: Callable[[str], str] = lambda _: "accepted", cost: float = 0.5):
        self.verdict, self.cost = verdict, cost
        self.started: list[str] = []
        self.cancelled: list[str] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self.hold: asyncio.Event | None = None
        self.fail_with: Exception | None = None

    def default_concurrency(self) -> int:
        return 3

    async def run(self, job: UnitJob) -> UnitOutcome:
        self.started.append(job.unit.id)
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            if self.hold is not None:
                await self.hold.wait()
            else:
                await asyncio.sleep(0)
            if self.fail_with is not None:
                raise self.fail_with
        except asyncio.CancelledError:
            self.cancelled.append(job.unit.id)
            raise
        finally:
            self.in_flight -= 1
        return UnitOutcome(
            unit=job.unit, verdict=self.verdict(job.unit.id), cost_usd=self.cost,
            input_tokens=10, output_tokens=5, duration_ms=7, error=None, model_requests=2,
            worker="here:1", started_at="t0", finished_at="t1",
            files={"report.json": b"{}", "events.jsonl": b""},
        )  # fmt: skip

    def close(self) -> None:
        pass


@pytest.fixture
def batch(write_batch: WriteBatch) -> Batch:
    """Six units: one item in three modes, two repeats each."""
    return load_batch(
        write_batch([{**ITEM, "modes": ["gate", "single-query", "unstructured"], "repeats": 2}])
    )


def results(out: Path) -> dict[str, str]:
    return {
        path.parent.name: json.loads(path.read_text())["outcome"]["verdict"]
        for path in (out / "units").glob("*/unit.json")
    }


def test_every_unit_runs_once_and_its_result_is_written_whole(batch: Batch, tmp_path: Path) -> None:
    executor = FakeExecutor()
    summary = BatchRunner(executor, concurrency=2).run_sync(batch, tmp_path / "out")
    assert sorted(executor.started) == sorted(u.id for u in batch.units)
    assert executor.most_in_flight == 2
    assert results(tmp_path / "out") == {u.id: "accepted" for u in batch.units}
    unit_dir = tmp_path / "out" / "units" / batch.units[0].id
    assert sorted(p.name for p in unit_dir.iterdir()) == [
        "events.jsonl",
        "report.json",
        "unit.json",
    ]
    assert summary.complete and summary.counts.accepted == 6
    assert summary.model_requests == 12
    assert summary.counts.cost_usd == pytest.approx(3.0)
    assert list((tmp_path / "out" / "units" / ".incoming").iterdir()) == []


def test_the_manifest_lists_the_units_of_the_shard(batch: Batch, tmp_path: Path) -> None:
    BatchRunner(FakeExecutor()).run_sync(batch, tmp_path / "out", shard=(2, 3))
    manifest = json.loads((tmp_path / "out" / "batch.json").read_text())
    assert manifest["shard"] == "2/3"
    assert manifest["total_units"] == 6
    assert [u["id"] for u in manifest["units"]] == [u.id for u in batch.shard(2, 3)]
    assert set(results(tmp_path / "out")) == {u.id for u in batch.shard(2, 3)}


def test_a_second_run_skips_every_finished_unit(batch: Batch, tmp_path: Path) -> None:
    BatchRunner(FakeExecutor(lambda i: "rejected" if "gate" in i else "accepted")).run_sync(
        batch, tmp_path / "out"
    )
    again = FakeExecutor()
    summary = BatchRunner(again).run_sync(batch, tmp_path / "out")
    assert again.started == []
    assert len(summary.skipped) == 6 and summary.ran == ()


def test_retry_failed_runs_only_rejected_and_error_units_and_replaces_their_results(
    batch: Batch, tmp_path: Path
) -> None:
    failing = {batch.units[0].id: "rejected", batch.units[1].id: "error"}
    BatchRunner(FakeExecutor(lambda i: failing.get(i, "accepted"))).run_sync(
        batch, tmp_path / "out"
    )
    accepted_record = tmp_path / "out" / "units" / batch.units[2].id / "unit.json"
    before = accepted_record.stat().st_mtime_ns
    again = FakeExecutor()
    BatchRunner(again, retry_failed=True).run_sync(batch, tmp_path / "out")
    assert sorted(again.started) == sorted(failing)
    assert set(results(tmp_path / "out").values()) == {"accepted"}
    assert accepted_record.stat().st_mtime_ns == before


def test_the_cost_cap_stops_scheduling_once_reached(batch: Batch, tmp_path: Path) -> None:
    executor = FakeExecutor(cost=1.0)
    summary = BatchRunner(executor, concurrency=1, max_cost=2.0).run_sync(batch, tmp_path / "out")
    assert len(executor.started) == 2
    assert summary.stopped == "max_cost"
    assert len(summary.unfinished) == 4 and not summary.complete


def test_a_stop_lets_running_units_finish_and_starts_no_more(batch: Batch, tmp_path: Path) -> None:
    executor = FakeExecutor()
    executor.hold = asyncio.Event()
    runner = BatchRunner(executor, concurrency=2, grace=60)

    def on_update(update: BatchUpdate) -> None:
        if update.kind == "started" and update.counts.running == 2:
            runner.stop()
            assert executor.hold is not None
            asyncio.get_running_loop().call_soon(executor.hold.set)

    runner.on_update = on_update
    summary = runner.run_sync(batch, tmp_path / "out")
    assert len(executor.started) == 2 and executor.cancelled == []
    assert set(results(tmp_path / "out")) == set(executor.started)
    assert summary.stopped == "stopped" and len(summary.unfinished) == 4


@pytest.mark.parametrize("how", ["grace over", "second stop"])
def test_running_units_are_cancelled_when_the_grace_is_over_or_on_a_second_stop(
    batch: Batch, tmp_path: Path, how: str
) -> None:
    executor = FakeExecutor()
    executor.hold = asyncio.Event()  # never set: the units run until cancelled
    runner = BatchRunner(executor, concurrency=2, grace=0 if how == "grace over" else 3600)

    def on_update(update: BatchUpdate) -> None:
        if update.kind == "started" and update.counts.running == 2:
            runner.stop()
            if how == "second stop":
                runner.stop()

    runner.on_update = on_update
    summary = runner.run_sync(batch, tmp_path / "out")
    assert sorted(executor.cancelled) == sorted(executor.started)
    assert results(tmp_path / "out") == {}
    assert len(summary.unfinished) == 6


def test_an_executor_failure_stops_scheduling_and_says_why(batch: Batch, tmp_path: Path) -> None:
    executor = FakeExecutor()
    executor.fail_with = ExecutorError("the cluster is gone")
    summary = BatchRunner(executor, concurrency=1).run_sync(batch, tmp_path / "out")
    assert executor.started == [batch.units[0].id]
    assert summary.stopped == "the cluster is gone"
    assert len(summary.unfinished) == 6


def test_updates_count_units_as_they_finish(batch: Batch, tmp_path: Path) -> None:
    updates: list[BatchUpdate] = []
    BatchRunner(FakeExecutor(), concurrency=1, on_update=updates.append).run_sync(
        batch, tmp_path / "out"
    )
    assert [u.kind for u in updates][:3] == ["planned", "started", "finished"]
    final = updates[-1].counts
    assert (final.done, final.to_run, final.running, final.accepted) == (6, 6, 0, 6)
    assert final.eta_seconds(1) == 0
