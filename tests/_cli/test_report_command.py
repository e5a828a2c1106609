"""``phasegate report``: logs in (files, gzip, stdin), tables, Markdown, JSON, files out."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from phasegate import EventLog, Mode, Runner, load_task
from phasegate.testing import ScriptedAgent, load_script
from tests.helpers.cli import PHASEGATE, phasegate
from tests.helpers.logs import three_runs
from tests.helpers.scenarios import EXAMPLE


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """A plain log file of the three reference runs."""
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(three_runs().lines) + "\n")
    return path


def test_json_from_real_runs_compares_the_modes(tmp_path: Path) -> None:
    """The lazy model run by the runner in gate and single-query mode, logged, reported."""
    log_file = tmp_path / "real.jsonl"
    task = load_task(EXAMPLE / "task.yaml")
    with EventLog(file=log_file) as sink:
        modes: tuple[Mode, ...] = ("gate", "single-query")
        for mode in modes:
            work = tmp_path / mode
            shutil.copytree(EXAMPLE / "project", work)
            agent = ScriptedAgent(load_script(EXAMPLE / "model.yaml"))
            Runner(agent, mode=mode, on_event=sink).run_sync(task, work)

    done = phasegate("report", log_file, "--format", "json")

    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    (row,) = summary["mode_comparison"]
    assert row["success_rate"] == {"gate": 1.0, "single-query": 0.0}
    assert row["gate_minus_single_query"] == 1.0
    gate = next(g for g in summary["groups"] if g["mode"] == "gate")
    assert [p["name"] for p in gate["phases"]] == ["edit", "summary"]
    assert gate["mean_attempts"] == 2.0


def test_gzip_files_stdin_and_plain_files_add_up(log: Path, tmp_path: Path) -> None:
    """One plain file, one gzip file and stdin: three times the runs."""
    packed = tmp_path / "old.log.gz"
    packed.write_bytes(gzip.compress(log.read_bytes()))

    done = subprocess.run(
        [*PHASEGATE, "report", str(log), str(packed), "-", "--format", "json"],
        input=log.read_text(), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["runs"] == 9


def test_markdown_is_a_job_summary_with_every_table(log: Path) -> None:
    """Headings and pipe tables; log text cannot break a table."""
    hostile = log.read_text().replace('"task": "fix"', '"task": "a|b"')
    log.write_text(hostile)

    done = phasegate("report", log, "--format", "markdown")

    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert text.startswith("## phasegate report")
    for title in ("### Runs", "### a\\|b / gate: phases", "### Modes compared (success rate)"):
        assert title in text
    assert "| a\\|b | gate | 1 | 100 % |" in text
    assert "+100 pts" in text


def test_the_table_format_draws_the_same_numbers(log: Path) -> None:
    """rich tables, plain when not a terminal."""
    done = phasegate("report", log, "--by", "task")

    assert done.returncode == 0, done.stderr
    assert "3 run(s) from" in done.stdout
    assert "Runs" in done.stdout and "67 %" in done.stdout
    assert "\x1b[" not in done.stdout


def test_output_writes_the_report_to_a_file(log: Path, tmp_path: Path) -> None:
    """--output: nothing on stdout, the file holds the report."""
    target = tmp_path / "report.json"

    done = phasegate("report", log, "-f", "json", "--output", target)

    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert json.loads(target.read_text())["runs"] == 3


def test_corrupt_lines_are_counted_with_a_warning(log: Path) -> None:
    """A truncated last line (a log still being written) is a warning, not a failure."""
    with log.open("a") as handle:
        handle.write('{"event": "run.completed", "ta')

    done = phasegate("report", log, "-f", "json")

    assert done.returncode == 0
    assert "skipped 1 corrupt or truncated line(s)" in done.stderr
    assert json.loads(done.stdout)["skipped_lines"] == 1


@pytest.mark.parametrize(("args", "message"), [
    (["--since", "last tuesday"], "is neither a time"),
    (["missing.jsonl"], "cannot read log missing.jsonl"),
    (["--format", "pdf"], "pdf"),
])  # fmt: skip
def test_bad_report_input_exits_two(log: Path, args: list[str], message: str) -> None:
    """Bad input is named; never a traceback."""
    done = phasegate("report", *(args if args[0] == "missing.jsonl" else [log, *args]))

    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_since_takes_a_time_or_an_age(log: Path) -> None:
    """The runs are from 2026-11-01: a later time drops them, an old enough age keeps them."""
    later = phasegate("report", log, "-f", "json", "--since", "2026-11-02")
    recent = phasegate("report", log, "-f", "json", "--since", "100000d")

    assert json.loads(later.stdout)["runs"] == 0
    assert json.loads(recent.stdout)["runs"] == 3
