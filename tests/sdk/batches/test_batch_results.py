"""A batch's output directory: whole results, one writer, accepted results kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from phasegate.errors import PhasegateError, UsageError
from phasegate.sdk.batches.loading import load_batch
from phasegate.sdk.batches.outcome import UnitOutcome
from phasegate.sdk.batches.results import ResultStore
from phasegate.sdk.batches.units import Unit
from tests.helpers.batches import WriteBatch


@pytest.fixture
def unit(write_batch: WriteBatch) -> Unit:
    return load_batch(write_batch()).units[0]


def outcome(unit: Unit, verdict: str) -> UnitOutcome:
    return UnitOutcome(
        unit=unit, verdict=verdict, cost_usd=None, input_tokens=0, output_tokens=0,
        duration_ms=1, error=None, model_requests=None, worker="w", started_at="a",
        finished_at="b", files={"report.json": verdict.encode()},
    )  # fmt: skip


def test_a_written_result_holds_its_files_and_its_record(unit: Unit, tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "out")
    with store.locked():
        written = store.write(outcome(unit, "rejected"))
    assert written == tmp_path / "out" / "units" / unit.id
    record = json.loads((written / "unit.json").read_text())
    assert record["unit"]["id"] == unit.id
    assert record["outcome"]["verdict"] == "rejected" and record["outcome"]["success"] is False
    assert (written / "report.json").read_bytes() == b"rejected"
    assert store.verdicts() == {unit.id: "rejected"}


def test_an_unaccepted_result_is_replaced_and_an_accepted_one_never(
    unit: Unit, tmp_path: Path
) -> None:
    store = ResultStore(tmp_path / "out")
    with store.locked():
        store.write(outcome(unit, "error"))
        store.write(outcome(unit, "accepted"))
        with pytest.raises(PhasegateError, match="never replaced"):
            store.write(outcome(unit, "rejected"))
    assert store.verdicts() == {unit.id: "accepted"}
    assert (tmp_path / "out" / "units" / unit.id / "report.json").read_bytes() == b"accepted"


def test_a_second_writer_is_refused_while_the_first_holds_the_directory(tmp_path: Path) -> None:
    first, second = ResultStore(tmp_path / "out"), ResultStore(tmp_path / "out")
    with first.locked():
        refused = pytest.raises(UsageError, match="another batch run is writing")
        with refused as raised, second.locked():
            pass
    assert raised.value.option == "out"
    with second.locked():  # free again once the first is done
        pass


def test_what_a_dead_writer_left_half_done_is_dropped_and_never_read_as_a_result(
    unit: Unit, tmp_path: Path
) -> None:
    store = ResultStore(tmp_path / "out")
    half = tmp_path / "out" / "units" / ".incoming" / f"{unit.id}.x"
    half.mkdir(parents=True)
    (half / "report.json").write_text("{")
    no_record = tmp_path / "out" / "units" / "other.gate.r1.000000000000"
    no_record.mkdir()
    assert store.verdicts() == {}
    with store.locked():
        assert not half.exists()
