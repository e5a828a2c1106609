"""A batch's output directory: whole results, one writer, accepted results kept, nothing
written or deleted through a link out of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from phasegate.errors import LinkedPathError, PhasegateError, UsageError
from phasegate.batches.loading import load_batch
from phasegate.batches.outcome import UnitOutcome
from phasegate.batches.results import ResultStore
from phasegate.batches.units import Unit
from tests.helpers.batches import WriteBatch
from tests.helpers.read_only import read_only


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


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder a results folder from elsewhere might point into: it must never change."""
    folder = tmp_path / "outside"
    (folder / "project").mkdir(parents=True)
    (folder / "project" / "main.py").write_text("print('keep me')\n")
    return folder


def tree(folder: Path) -> dict[str, bytes | None]:
    """Every path below ``folder`` with its bytes (None for a folder)."""
    return {
        str(path.relative_to(folder)): None if path.is_dir() else path.read_bytes()
        for path in sorted(folder.rglob("*"))
    }


def test_an_incoming_folder_that_is_a_link_is_refused_and_nothing_outside_is_deleted(
    tmp_path: Path, outside: Path
) -> None:
    """A results artifact with `units/.incoming` pointing elsewhere: the leftovers of a dead
    writer are never removed through it."""
    (tmp_path / "out" / "units").mkdir(parents=True)
    (tmp_path / "out" / "units" / ".incoming").symlink_to(outside, target_is_directory=True)
    before = tree(outside)
    with pytest.raises(LinkedPathError) as raised, ResultStore(tmp_path / "out").locked():
        pass
    assert "units/.incoming is a symbolic link" in str(raised.value)
    assert raised.value.option == "out" and raised.value.exit_code == 2
    assert tree(outside) == before


def test_a_units_folder_that_is_a_link_is_refused_and_no_result_goes_there(
    tmp_path: Path, outside: Path
) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "units").symlink_to(outside, target_is_directory=True)
    before = tree(outside)
    refused = pytest.raises(LinkedPathError, match="units is a symbolic link")
    with refused, ResultStore(tmp_path / "out").locked():
        pass
    assert tree(outside) == before


def test_a_link_left_in_incoming_is_removed_as_a_link(tmp_path: Path, outside: Path) -> None:
    """A link among the leftovers goes; the folder it points at stays whole."""
    incoming = tmp_path / "out" / "units" / ".incoming"
    incoming.mkdir(parents=True)
    (incoming / "u.x").symlink_to(outside, target_is_directory=True)
    before = tree(outside)
    with ResultStore(tmp_path / "out").locked():
        assert list(incoming.iterdir()) == []
    assert tree(outside) == before


def test_a_result_folder_that_is_a_link_is_not_a_result_and_is_replaced_as_a_link(
    unit: Unit, tmp_path: Path, outside: Path
) -> None:
    """`units/<id>` pointing at a folder elsewhere that holds an accepted record: the unit is
    unfinished, and its new result takes the link's place without touching the target."""
    (outside / "unit.json").write_text(json.dumps({"outcome": {"verdict": "accepted"}}))
    (tmp_path / "out" / "units").mkdir(parents=True)
    (tmp_path / "out" / "units" / unit.id).symlink_to(outside, target_is_directory=True)
    before = tree(outside)
    store = ResultStore(tmp_path / "out")
    with store.locked():
        assert store.verdicts() == {}
        written = store.write(outcome(unit, "rejected"))
    assert not written.is_symlink() and store.verdicts() == {unit.id: "rejected"}
    assert tree(outside) == before


def test_a_results_folder_that_cannot_be_written_is_a_phasegate_error_not_a_traceback(
    unit: Unit, tmp_path: Path
) -> None:
    """A read-only `units/.incoming` (or a full disk): the error says what could not be
    written, and no half-made result is left."""
    store = ResultStore(tmp_path / "out")
    refused = pytest.raises(PhasegateError, match=f"cannot write the result of {unit.id}")
    with store.locked(), read_only(tmp_path / "out" / "units" / ".incoming"), refused:
        store.write(outcome(unit, "rejected"))
    assert store.verdicts() == {}
