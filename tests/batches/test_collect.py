"""Reading batch output directories: shards merged, missing units, duplicates, damage."""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

from phasegate.batches.collect import collect_batches
from phasegate.batches.sources import CopySource
from phasegate.batches.units import Unit
from phasegate.errors import PhasegateError, UsageError
from phasegate.metrics.aggregate import LogAggregator
from phasegate.metrics.render import render_markdown
from phasegate.metrics.summary import summarize
from phasegate.modes import MODES
from phasegate.testing import load_script
from tests.helpers.batch_dirs import GOOD, LAZY, make_unit, run_into, write_manifest
from tests.helpers.checked_runs import EXAMPLE as PROVE_THE_FIX
from tests.helpers.fuzz import bounded_memory, hostile_text


def report(*directories: Path) -> dict[str, Any]:
    """The merged summary of ``directories`` with its batch section, as the command makes it."""
    collected = collect_batches(directories)
    aggregator = LogAggregator()
    collected.aggregate(aggregator)
    summary = summarize(aggregator, warnings=collected.warnings)
    return {**summary, "batch": collected.section()}


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Unit]]:
    """One directory with 6 finished units: per mode, repeat 1 lazy and repeat 2 good
    (gate accepts both; the other modes accept only the good one)."""
    out = tmp_path_factory.mktemp("whole") / "out"
    units = [make_unit("fix", mode, repeat) for mode in MODES for repeat in (1, 2)]
    write_manifest(out, units)
    for unit in units:
        run_into(out, unit, LAZY if unit.repeat == 1 else GOOD)
    return out, units


def shard(whole: Path, units: list[Unit], into: Path, index: int, count: int) -> Path:
    """A shard directory holding the whole batch's results of shard ``index`` of ``count``."""
    mine = [unit for unit in units if unit.shard_of(count) == index]
    write_manifest(into, mine, shard=f"{index + 1}/{count}", total_units=len(units))
    for unit in mine:
        shutil.copytree(whole / "units" / unit.id, into / "units" / unit.id)
    return into


def test_two_shards_merged_report_exactly_what_the_whole_batch_does(
    whole: tuple[Path, list[Unit]], tmp_path: Path
) -> None:
    """Everything but the list of directories is the same, whichever order they are named in."""
    out, units = whole
    first = shard(out, units, tmp_path / "a", 0, 2)
    second = shard(out, units, tmp_path / "b", 1, 2)

    merged, reversed_ = report(first, second), report(second, first)
    alone = report(out)

    for summary in (merged, reversed_, alone):
        summary["batch"].pop("directories")
    assert merged == alone == reversed_
    assert merged["warnings"] == []
    (row,) = merged["mode_comparison"]
    assert row["accepted"] == {"gate": 2, "single-query": 1, "unstructured": 1}
    assert row["gate_minus_single_query_interval_95"] == [-0.2726, 0.9055]


def test_the_batch_section_counts_units_verdicts_and_model_requests(
    whole: tuple[Path, list[Unit]],
) -> None:
    """6 planned, 6 finished, 4 accepted and 2 rejected; 2 model requests each; no cost."""
    out, _ = whole

    batch = report(out)["batch"]

    assert (batch["planned"], batch["finished"], batch["missing"]) == (6, 6, [])
    assert batch["verdicts"] == {"accepted": 4, "rejected": 2}
    assert (batch["model_requests"], batch["cost_usd"]) == (12, None)
    assert batch["directories"] == [{"path": str(out), "batch": "examples", "shard": None,
                                     "total_units": 6, "planned": 6, "finished": 6}]  # fmt: skip


def test_each_check_has_its_pass_rate_across_units_and_the_modes_are_compared_on_it(
    tmp_path: Path,
) -> None:
    """prove-the-fix's model breaks add() first: in gate mode the tests fail, then pass after
    the feedback (2 runs of the check per unit, the unit ends with it passing); in
    single-query mode it is judged once, failing. Two units per mode."""
    out = tmp_path / "out"
    units = [make_unit("prove", mode, repeat, task="prove-the-fix", example=PROVE_THE_FIX)
             for mode in ("gate", "single-query") for repeat in (1, 2)]  # fmt: skip
    write_manifest(out, units)
    for unit in units:
        run_into(out, unit, load_script(PROVE_THE_FIX / "model.yaml"))

    summary = report(out)

    rows = {row["mode"]: row for row in summary["checks"]}
    assert set(rows) == {"gate", "single-query"}
    gate, single = rows["gate"], rows["single-query"]
    assert (gate["runs"], gate["passed"], gate["task_runs"], gate["passed_at_end"]) == (4, 2, 2, 2)
    assert (single["runs"], single["passed"], single["task_runs"], single["end_pass_rate"]) == (
        2, 0, 2, 0.0,
    )  # fmt: skip
    (compared,) = summary["check_comparison"]
    assert compared["end_pass_rate"] == {"gate": 1.0, "single-query": 0.0}
    assert compared["task_runs"] == {"gate": 2, "single-query": 2}
    assert compared["gate_minus_single_query"] == 1.0
    assert "### Checks the gate ran (each task run is a unit)" in render_markdown(summary)


def test_units_planned_without_a_result_are_listed_as_missing_and_a_lost_shard_is_warned(
    whole: tuple[Path, list[Unit]], tmp_path: Path
) -> None:
    """One shard (of the fewest that split these units), with one of its results gone: its
    id is missing, and the manifest's total says units of the batch are planned nowhere."""
    out, units = whole
    count, index = next(
        (count, index)
        for count in range(2, 7)
        for index in range(count)
        if 0 < sum(unit.shard_of(count) == index for unit in units) < len(units)
    )
    first = shard(out, units, tmp_path / "a", index, count)
    lost = sorted(path.name for path in (first / "units").iterdir())[0]
    shutil.rmtree(first / "units" / lost)

    summary = report(first)

    assert summary["batch"]["missing"] == [lost]
    assert any("plan" in w and "of the batch's 6 units" in w for w in summary["warnings"])


def test_a_unit_found_in_two_directories_is_counted_once_the_later_copy(
    tmp_path: Path,
) -> None:
    """The same unit run twice (a retry in a copied directory): one result, a warning."""
    unit = make_unit("fix", "single-query", 1)
    for name, script, when in (("old", LAZY, "2026-01-01T00:00:00Z"),
                               ("new", GOOD, "2026-01-02T00:00:00Z")):  # fmt: skip
        write_manifest(tmp_path / name, [unit])
        run_into(tmp_path / name, unit, script, finished_at=when)

    summary = report(tmp_path / "new", tmp_path / "old")

    assert summary["batch"]["duplicates"] == [unit.id]
    assert summary["batch"]["verdicts"] == {"accepted": 1}
    assert summary["runs"] == 1
    (warning,) = summary["warnings"]
    assert unit.id in warning and f"kept {tmp_path / 'new' / 'units' / unit.id}" in warning


def test_costs_and_unit_errors_without_a_log_come_from_the_units_records(
    tmp_path: Path,
) -> None:
    """A unit whose work directory could not be made has no run in its log: it is still a
    failed repeat (an error), and billed costs add up."""
    good = make_unit("fix", "gate", 1)
    nowhere = CopySource.model_validate({"copy": str(tmp_path / "no-such-project")})
    broken = make_unit("fix", "gate", 2).model_copy(update={"workdir": nowhere})
    write_manifest(tmp_path / "out", [good, broken])
    run_into(tmp_path / "out", good, GOOD, cost_usd=0.25)
    outcome = run_into(tmp_path / "out", broken, GOOD, cost_usd=0.5)

    summary = report(tmp_path / "out")

    assert outcome.verdict == "error" and outcome.files.get("events.jsonl", b"") == b""
    gate = summary["groups"][0]
    assert (gate["runs"], gate["accepted"], gate["errors"]) == (2, 1, 1)
    assert summary["batch"]["cost_usd"] == 0.75
    assert summary["batch"]["verdicts"] == {"accepted": 1, "error": 1}


def test_damaged_files_are_warnings_naming_them_never_exceptions(
    whole: tuple[Path, list[Unit]], tmp_path: Path
) -> None:
    """A corrupt unit.json (the unit becomes missing), a record of the wrong shape, a truncated
    event log (its lines up to the damage count), work in progress and debris are read past."""
    out = tmp_path / "out"
    shutil.copytree(whole[0], out)
    ids = sorted(path.name for path in (out / "units").iterdir())
    (out / "units" / ids[0] / "unit.json").write_text('{"schema_version": 1, "unit": ')
    record = json.loads((out / "units" / ids[1] / "unit.json").read_text())
    record["outcome"]["input_tokens"] = -5
    (out / "units" / ids[1] / "unit.json").write_text(json.dumps(record))
    events = out / "units" / ids[2] / "events.jsonl"
    events.write_bytes(events.read_bytes()[:-40])
    (out / "units" / ".incoming" / ids[3]).mkdir(parents=True)
    (out / "units" / "half-written").mkdir()

    summary = report(out)

    assert summary["batch"]["missing"] == sorted(ids[:2])
    assert summary["batch"]["finished"] == 4
    warnings = "\n".join(summary["warnings"])
    assert f"{out / 'units' / ids[0] / 'unit.json'}: " in warnings
    assert f"{ids[1]}/unit.json: outcome.input_tokens: " in warnings
    assert summary["skipped_lines"] == 1  # the cut-off run.completed line


def test_a_corrupt_manifest_is_a_warning_and_the_results_still_count(
    whole: tuple[Path, list[Unit]], tmp_path: Path
) -> None:
    """Without a readable plan nothing is known to be missing; every result still counts."""
    out = tmp_path / "out"
    shutil.copytree(whole[0], out)
    (out / "batch.json").write_text("[1, 2")

    summary = report(out)

    assert summary["runs"] == 6
    assert summary["batch"]["planned"] == 0 and len(summary["batch"]["unplanned"]) == 6
    assert any(w.startswith(f"{out / 'batch.json'}: ") for w in summary["warnings"])


def test_a_directory_that_is_no_batch_output_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    """An empty folder, a missing one, a file: exit code 2, the path in the message."""
    (tmp_path / "file.txt").write_text("x")
    for path in (tmp_path, tmp_path / "missing", tmp_path / "file.txt"):
        with pytest.raises(UsageError, match="is not a batch output directory") as caught:
            collect_batches([path])
        assert str(path) in str(caught.value)


def test_an_empty_shard_is_a_report_with_nothing_in_it(tmp_path: Path) -> None:
    """A shard whose share of a small batch is no unit: planned 0, nothing missing."""
    write_manifest(tmp_path / "empty", [], shard="3/3", total_units=0)

    summary = report(tmp_path / "empty")

    assert (summary["runs"], summary["batch"]["planned"], summary["warnings"]) == (0, 0, [])


@pytest.mark.fuzz
@given(hostile_text)
def test_any_unit_record_or_manifest_text_is_read_without_an_escaping_error(
    text: str,
) -> None:
    """Whatever a record or manifest holds, only phasegate's errors can escape."""
    with tempfile.TemporaryDirectory() as scratch, bounded_memory():
        out = Path(scratch)
        (out / "units" / "u").mkdir(parents=True)
        (out / "units" / "u" / "unit.json").write_text(text, errors="surrogatepass")
        (out / "batch.json").write_text(text, errors="surrogatepass")
        with contextlib.suppress(PhasegateError):
            report(out)
