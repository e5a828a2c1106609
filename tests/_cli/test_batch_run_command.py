"""``phasegate batch run`` as a user runs it: the real Claude Code CLI against the scripted
model server, real processes, real signals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.batches import WriteBatch, batch_writer
from tests.helpers.cli import phasegate
from tests.helpers.read_only import read_only

pytestmark = pytest.mark.cli

TIMING = {"duration_ms", "time_to_completion_ms"}
"""Report fields that are wall-clock times."""
THREE_MODES = {
    "task": "example/task.yaml",
    "workdir": "example/project",
    "model_script": "example/model.yaml",
    "modes": ["gate", "single-query", "unstructured"],
    "repeats": 2,
}


@pytest.fixture
def write_batch(tmp_path: Path) -> WriteBatch:
    return batch_writer(tmp_path)


def records(out: Path) -> dict[str, dict[str, Any]]:
    """Every finished unit's unit.json, by id."""
    return {
        path.parent.name: json.loads(path.read_text())
        for path in (out / "units").glob("*/unit.json")
    }


def children_of(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not count)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def run_json(*args: str | Path) -> dict[str, Any]:
    done = phasegate("batch", "run", *args, "--json", "--quiet")
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_six_units_at_concurrency_two_each_leave_a_whole_result(
    write_batch: WriteBatch, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    done = phasegate("batch", "run", write_batch([THREE_MODES]), "--out", out, "--concurrency", "2")
    assert done.returncode == 0, done.stderr
    found = records(out)
    assert len(found) == 6
    verdicts = {(r["unit"]["mode"], r["outcome"]["verdict"]) for r in found.values()}
    # The lazy model: accepted behind the gate, rejected when judged once.
    assert verdicts == {("gate", "accepted"), ("single-query", "rejected"),
                        ("unstructured", "rejected")}  # fmt: skip
    for unit_id in found:
        files = {p.name for p in (out / "units" / unit_id).iterdir()}
        assert files == {"unit.json", "report.json", "events.jsonl", "transcript.json"}
        report = json.loads((out / "units" / unit_id / "report.json").read_text())
        assert report["verdict"] == found[unit_id]["outcome"]["verdict"]
    assert done.stderr.count("phasegate: [") == 6  # one line per unit when not on a terminal
    assert "6 unit(s); ran 6 (2 accepted, 4 rejected, 0 error)" in done.stdout


def test_a_killed_batch_run_again_finishes_only_what_was_unfinished(
    write_batch: WriteBatch, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    batch = write_batch([THREE_MODES])
    process = subprocess.Popen(
        [sys.executable, "-m", "phasegate", "batch", "run", str(batch), "--out", str(out),
         "--concurrency", "1", "--quiet"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        # Two results written and the next unit's process started: at concurrency 1 the gap
        # between one unit's end and the next one's start would otherwise leave none to watch.
        units: list[int] = []
        while process.poll() is None and time.monotonic() < deadline:
            if len(records(out)) >= 2:
                units = children_of(process.pid)
                if units:
                    break
            time.sleep(0.05)
    finally:
        process.kill()
        process.wait()
    # Each unit process sees the batch go and ends itself with the agent CLI it started.
    deadline = time.monotonic() + 30
    while any(alive(pid) for pid in units) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert units and not any(alive(pid) for pid in units)
    before = records(out)
    assert 2 <= len(before) < 6
    assert all((out / "units" / i / "report.json").exists() for i in before)  # never partial
    stamps = {i: (out / "units" / i / "unit.json").stat().st_mtime_ns for i in before}

    rerun = run_json(batch, "--out", out)
    assert set(rerun["skipped"]) == set(before)
    assert set(rerun["ran"]).isdisjoint(before)
    after = records(out)
    assert len(after) == 6 and set(rerun["ran"]) == set(after) - set(before)
    assert {i: (out / "units" / i / "unit.json").stat().st_mtime_ns for i in before} == stamps
    # Every model request of the rerun belongs to a unit it ran: finished units sent none.
    requests = sum(after[i]["outcome"]["model_requests"] for i in rerun["ran"])
    assert rerun["model_requests"] == requests > 0


def test_retry_failed_reruns_only_the_rejected_units(
    write_batch: WriteBatch, tmp_path: Path
) -> None:
    out, batch = tmp_path / "out", write_batch([THREE_MODES])
    first = run_json(batch, "--out", out, "--concurrency", "2")
    accepted = {i for i, r in records(out).items() if r["outcome"]["verdict"] == "accepted"}
    rejected = set(first["ran"]) - accepted
    stamps = {i: (out / "units" / i / "unit.json").stat().st_mtime_ns for i in accepted}
    again = run_json(batch, "--out", out, "--concurrency", "2", "--retry", "failed")
    assert set(again["ran"]) == rejected and set(again["skipped"]) == accepted
    assert {i: (out / "units" / i / "unit.json").stat().st_mtime_ns for i in accepted} == stamps


def merged_report(*directories: Path) -> dict[str, Any]:
    """``batch report DIR... --format json`` without what differs between two real runs of
    the same units: wall-clock times and the names of the directories read."""
    done = phasegate("batch", "report", *directories, "--format", "json")
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    report["batch"].pop("directories")

    def timeless(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: timeless(v) for k, v in value.items() if k not in TIMING}
        return [timeless(v) for v in value] if isinstance(value, list) else value

    return dict(timeless(report))


def test_two_shards_cover_the_units_of_the_whole_batch_exactly_once(
    write_batch: WriteBatch, tmp_path: Path
) -> None:
    batch = write_batch([{**THREE_MODES, "repeats": 1}])
    whole = run_json(batch, "--out", tmp_path / "whole", "--concurrency", "2")
    first = run_json(batch, "--out", tmp_path / "a", "--shard", "1/2", "--concurrency", "2")
    second = run_json(batch, "--out", tmp_path / "b", "--shard", "2/2", "--concurrency", "2")
    assert set(first["ran"]).isdisjoint(second["ran"])
    assert sorted(first["ran"] + second["ran"]) == sorted(whole["ran"])
    verdicts = {**records(tmp_path / "a"), **records(tmp_path / "b")}
    assert {i: r["outcome"]["verdict"] for i, r in verdicts.items()} == {
        i: r["outcome"]["verdict"] for i, r in records(tmp_path / "whole").items()
    }
    merged = merged_report(tmp_path / "a", tmp_path / "b")
    assert merged == merged_report(tmp_path / "whole")
    assert merged["batch"]["finished"] == 3 and merged["batch"]["missing"] == []
    assert merged["mode_comparison"][0]["gate_minus_single_query"] == 1.0


def test_ctrl_c_stops_scheduling_and_records_no_unit_the_interrupt_broke(
    write_batch: WriteBatch, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    process = subprocess.Popen(
        [sys.executable, "-m", "phasegate", "batch", "run", str(write_batch([THREE_MODES])),
         "--out", str(out), "--concurrency", "2", "--json", "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 90
    while len(records(out)) < 2 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGINT)  # as a terminal does: the CLIs it runs get it too
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert "interrupted; run the same command again to go on" in stderr
    summary = json.loads(stdout)
    found = records(out)
    assert set(summary["ran"]) == set(found) and summary["unfinished"]
    assert summary["stopped"] == "stopped"
    assert {r["outcome"]["verdict"] for r in found.values()} <= {"accepted", "rejected"}


@pytest.mark.parametrize("repeats", ["many", "true"])
def test_a_malformed_batch_file_exits_2_naming_the_file_and_the_field(
    tmp_path: Path, repeats: str
) -> None:
    """``repeats: true`` is refused too: a bool is an int to a lax field, which ran it once."""
    bad = tmp_path / "batch.yaml"
    bad.write_text(f"items:\n  - task: t.yaml\n    repeats: {repeats}\n")
    done = phasegate("batch", "run", bad, "--out", tmp_path / "out")
    assert done.returncode == 2
    assert f"{bad}: items.0.repeats: must be a whole number, not " in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()


def test_a_work_directory_source_that_does_not_exist_exits_2_before_any_unit_runs(
    write_batch: WriteBatch, tmp_path: Path
) -> None:
    batch = write_batch([{**THREE_MODES, "workdir": {"copy": "gone"}}])
    done = phasegate("batch", "run", batch, "--out", tmp_path / "out")
    assert done.returncode == 2
    assert f"{batch}: items.0.workdir: {tmp_path / 'gone'} is not a directory" in done.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--shard", "0/2"], "--shard '0/2' is not I/N"),
        (["--shard", "1/" + "9" * 5000], "--shard '1/999999999"),
        (["--address", "ray://x:1"], "--address is for the Ray executor: add --executor ray"),
        (["--cpus-per-unit", "2"], "--cpus-per-unit is for the Ray executor: add --executor ray"),
    ],
)
def test_bad_options_exit_2_with_what_to_do(
    write_batch: WriteBatch, tmp_path: Path, args: list[str], message: str
) -> None:
    done = phasegate("batch", "run", write_batch(), "--out", tmp_path / "out", *args)
    assert done.returncode == 2
    assert message in done.stderr


def test_the_cost_cap_stops_starting_units_and_exits_3(
    write_batch: WriteBatch, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    # Each gate unit of the example costs $0.0125: the cap is reached after the second.
    done = phasegate(
        "batch", "run", write_batch([THREE_MODES]), "--out", out, "--concurrency", "1",
        "--max-cost", "0.02", "--json", "--quiet",
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert "stopped early: the cost cap was reached; run again to go on" in done.stderr
    summary = json.loads(done.stdout)
    assert summary["stopped"] == "max_cost" and summary["cost_usd"] >= 0.02
    assert len(summary["ran"]) + len(summary["unfinished"]) == 6
    assert len(records(out)) == len(summary["ran"]) < 6


@pytest.mark.ray
def test_executor_ray_starts_a_local_cluster_and_writes_every_unit_once(
    write_batch: WriteBatch, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    batch = write_batch([{**THREE_MODES, "repeats": 1}])
    summary = run_json(batch, "--out", out, "--executor", "ray", "--cpus-per-unit", "1")
    assert sorted(summary["ran"]) == sorted(records(out)) and len(summary["ran"]) == 3
    assert summary["unfinished"] == [] and summary["accepted"] == 1


def test_executor_ray_without_ray_installed_exits_2_naming_the_extra(
    write_batch: WriteBatch, tmp_path: Path
) -> None:
    shadow = tmp_path / "shadow" / "ray"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('No module named ray')\n")
    done = subprocess.run(
        [sys.executable, "-m", "phasegate", "batch", "run", str(write_batch()),
         "--out", str(tmp_path / "out"), "--executor", "ray"],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "PYTHONPATH": str(tmp_path / "shadow")},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "pip install 'phasegate[ray]'" in done.stderr
    assert "(command line: --executor)" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_results_folder_that_cannot_be_written_stops_with_exit_3_and_the_summary(
    write_batch: WriteBatch, tmp_path: Path
) -> None:
    """A read-only results folder (an artifact mounted read-only, a full disk): the unit runs,
    its result cannot be kept, and the batch stops cleanly: exit 3, the `--json` summary on
    stdout with the unit unfinished, the reason on stderr, no traceback."""
    out = tmp_path / "out"
    (out / "units" / ".incoming").mkdir(parents=True)
    with read_only(out / "units" / ".incoming"):
        done = phasegate("batch", "run", write_batch(), "--out", out, "--json", "--quiet")
    assert done.returncode == 3, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    summary = json.loads(done.stdout)
    assert summary["ran"] == [] and len(summary["unfinished"]) == 1
    assert summary["stopped"].startswith("cannot write the result of ")
    assert "stopped early: cannot write the result of" in done.stderr
    assert records(out) == {}


def test_the_temporary_folders_of_a_batch_killed_with_sigkill_are_removed_by_the_next_run(
    write_batch: WriteBatch, tmp_path: Path, temp_root: Path
) -> None:
    """A unit in flight has three: its copy of the work directory, the scripted model's
    HOME (both made by the unit's process) and the folder its outcome comes back in (made
    by the batch). SIGKILL to both processes removes none; the next batch run does."""
    (tmp_path / "hang.yaml").write_text("replies:\n  - hang: true\n")
    hanging = write_batch(
        [{**THREE_MODES, "modes": ["gate"], "repeats": 1, "model_script": "hang.yaml"}],
        name="hanging.yaml",
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "phasegate", "batch", "run", str(hanging), "--out",
         str(tmp_path / "hung"), "--quiet"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    prefixes = ("phasegate-unit-out-", "phasegate-home-", "phasegate-unit-")

    def made() -> dict[str, Path]:
        found: dict[str, Path] = {}
        for path in temp_root.iterdir():
            prefix = next((p for p in prefixes if path.name.startswith(p)), None)
            if prefix is not None:
                found.setdefault(prefix, path)
        return found

    try:
        deadline = time.monotonic() + 90  # a condition waited on, with a timeout
        while len(made()) < 3 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        left = made()
        assert len(left) == 3, left
        unit_pid = int(left["phasegate-unit-"].name.split("-")[3])
        os.killpg(unit_pid, signal.SIGKILL)  # the unit and the CLI it started
    finally:
        process.kill()
        process.wait()
    deadline = time.monotonic() + 30
    while alive(unit_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(unit_pid)
    assert all(path.is_dir() for path in left.values())

    run_json(write_batch([{**THREE_MODES, "modes": ["gate"], "repeats": 1}]), "--out",
             tmp_path / "next")  # fmt: skip

    assert not any(path.exists() for path in left.values())
    assert list(temp_root.glob("phasegate-*")) == []
