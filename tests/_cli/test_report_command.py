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


def test_gzip_on_stdin_is_decompressed_too(log: Path) -> None:
    """``zcat``-less pipelines: a gzip stream on stdin is recognised by its signature."""
    done = subprocess.run(
        [*PHASEGATE, "report", "-", "--format", "json"],
        input=gzip.compress(log.read_bytes()), capture_output=True, timeout=120, check=False,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["runs"] == 3


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
    assert "| a\\|b | gate | 1 | 1 | 0 | 100 % |" in text
    assert "+100 pts" in text


def test_the_table_format_draws_the_same_numbers(log: Path) -> None:
    """rich tables, plain when not a terminal."""
    done = phasegate("report", log, "--by", "task")

    assert done.returncode == 0, done.stderr
    assert "3 runs from" in done.stdout
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
    assert "skipped 1 corrupt or truncated line\n" in done.stderr
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


@pytest.mark.parametrize(
    "damage",
    [lambda packed: packed[:-20], lambda packed: packed[:10] + b"\xff" * 64],
    ids=["truncated", "garbage-after-the-signature"],
)
def test_a_damaged_gzip_log_is_a_warning_on_stderr_and_in_the_report(
    log: Path, tmp_path: Path, damage: object
) -> None:
    """A cut-off .gz or garbage after the gzip signature: the report is written from what
    could be read, stderr warns, and the JSON carries the warning."""
    packed = tmp_path / "old.jsonl.gz"
    packed.write_bytes(damage(gzip.compress(log.read_bytes())))  # type: ignore[operator]

    done = phasegate("report", log, packed, "-f", "json")

    assert done.returncode == 0, done.stderr
    assert f"phasegate: warning: {packed}: damaged gzip stream (" in done.stderr
    assert "Traceback" not in done.stderr
    (warning,) = json.loads(done.stdout)["warnings"]
    assert warning.startswith(f"{packed}: damaged gzip stream")


@pytest.mark.parametrize("value", ["1e999", "9" * 400, "-100000"])
def test_an_impossible_duration_is_a_skipped_line_not_a_crash(log: Path, value: str) -> None:
    """``duration_ms`` infinite, 400 digits long or negative: one corrupt line, three runs
    minus the one it ended."""
    text = log.read_text()
    last = text.rindex('"duration_ms": 100000')
    log.write_text(text[:last] + f'"duration_ms": {value}' + text[last + 21 :])

    done = phasegate("report", log, "-f", "json")

    assert done.returncode == 0, done.stderr
    assert "skipped 1 corrupt or truncated line\n" in done.stderr
    summary = json.loads(done.stdout)
    assert (summary["runs"], summary["skipped_lines"]) == (2, 1)


def test_a_line_past_the_cap_is_skipped_and_said_to_be_too_long(log: Path) -> None:
    """A line over 1 MiB is one corrupt line, and the warning says why."""
    with log.open("a") as handle:
        handle.write('{"event": "run.completed", "x": "' + "x" * (1 << 20) + '"}\n')

    done = phasegate("report", log, "-f", "json")

    assert done.returncode == 0, done.stderr
    assert "skipped 1 corrupt or truncated line (1 longer than 1 MiB)" in done.stderr
    assert json.loads(done.stdout)["skipped_lines"] == 1


@pytest.mark.parametrize("how", ["same path", "relative path", "symlink", "hard link"])
def test_output_onto_one_of_the_logs_is_refused_and_the_log_kept(
    log: Path, tmp_path: Path, how: str
) -> None:
    """--output naming a log read (by any path to the same file) exits 2 before reading,
    and the log is untouched."""
    before = log.read_bytes()
    target = {"same path": log, "relative path": Path("runs.jsonl")}.get(how)
    if target is None:
        target = tmp_path / "report.html"
        (target.symlink_to if how == "symlink" else target.hardlink_to)(log)

    done = phasegate("report", log, "--format", "html", "--output", target, cwd=tmp_path)

    assert done.returncode == 2
    assert f"--output {target} is the log {log}" in done.stderr
    assert "Traceback" not in done.stderr
    assert log.read_bytes() == before


def test_an_unknown_cost_shows_as_missing_and_one_run_in_the_singular(log: Path) -> None:
    """Lines with ``cost_usd: null`` (an agent that reports no cost): the table and Markdown
    show a dash, never "$0.0000"; one run reads "1 run"."""
    lines = log.read_text().splitlines()
    one_run = [line for line in lines if '"run_id": "r1"' in line]
    log.write_text("\n".join(one_run).replace('"cost_usd": 0.5', '"cost_usd": null')
                   .replace('"cost_usd": 0.01', '"cost_usd": null') + "\n")  # fmt: skip

    table = phasegate("report", log)
    markdown = phasegate("report", log, "-f", "markdown")

    assert table.returncode == 0 and markdown.returncode == 0
    assert table.stdout.startswith(f"1 run from {len(one_run)} log lines.")
    assert "$0.0000" not in table.stdout + markdown.stdout
    assert "| fix | gate | 0 % | 2.00 | 2×1 | 2 | 0 | 0 | 1.67 min | 1.67 min |" in markdown.stdout
    assert "| fix | gate | 1000/100 | – | 0/0 – | 0/0 – | 1000/100 | – |" in markdown.stdout
