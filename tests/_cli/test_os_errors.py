"""What the system refuses ends every command with its documented exit code and one line.

A full disk under standard output or a log file (``/dev/full`` is one, for real), a folder
that cannot be written, too many open files: the command names what failed and what to do,
exits 2 when it finds out before any work and 3 once work has begun, and prints no trace.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.batches import batch_writer
from tests.helpers.cli import PHASEGATE, phasegate, run_main
from tests.helpers.github_reports import hostile_run_report, write_report
from tests.helpers.inputs import planned_ci_task
from tests.helpers.read_only import read_only
from tests.helpers.scenarios import EXAMPLE

FULL = Path("/dev/full")
ANSWERS = json.dumps({"target": "Fly.io", "team": "core"})
SCRIPT = {"replies": [{"text": "PHASE 1 COMPLETE: done"}]}
PIPELINE = (
    "name: p\nstages:\n  - name: one\n    prompt: Do it.\n    exit_when: [{file_exists: app.py}]\n"
)
TRANSCRIPT = (
    Path(__file__).resolve().parents[1] / "fixtures" / "transcripts" / "edit_then_json.jsonl"
)

pytestmark = [
    pytest.mark.skipif(not FULL.exists(), reason="needs /dev/full"),
    pytest.mark.skipif(shutil.which("git") is None, reason="judge's checkout needs git"),
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the example project, and a script for the scripted agent beside it."""
    shutil.copytree(EXAMPLE / "project", tmp_path / "project")
    (tmp_path / "script.json").write_text(json.dumps(SCRIPT))
    return tmp_path / "project"


def to_full_stdout(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """The CLI with its standard output on a disk that is full."""
    with FULL.open("w") as full:
        return subprocess.run(
            [*PHASEGATE, *map(str, args)], stdout=full, stderr=subprocess.PIPE, text=True,
            timeout=120, check=False,
        )  # fmt: skip


def one_error_line(stderr: str) -> str:
    """The single ``phasegate: error:`` line of ``stderr``; no trace anywhere."""
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr
    (line,) = [line for line in stderr.splitlines() if line.startswith("phasegate: error:")]
    return line


def git_checkout(work: Path) -> Path:
    """``work`` made a git repository with everything committed (what judge compares with)."""
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "start"]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                       cwd=work, check=True, capture_output=True)  # fmt: skip
    return work


def empty_batch_output(out: Path) -> Path:
    """A results folder a batch made before any unit finished: a report of nothing."""
    (out / "units").mkdir(parents=True)
    return out


def commands(tmp_path: Path, project: Path) -> dict[str, list[str | Path]]:
    """A command line of each command that prints a result, ready to run."""
    (tmp_path / "ci").mkdir(exist_ok=True)
    task, ci_project, plan, ci_script = planned_ci_task(tmp_path / "ci")
    report = write_report(tmp_path / "report.json", hostile_run_report("x"))
    script = project.parent / "script.json"
    (tmp_path / "batch").mkdir()
    pipeline = tmp_path / "pipeline.yaml"
    pipeline.write_text(PIPELINE)
    return {
        "run": ["run", EXAMPLE / "task.yaml", "--workdir", project, "--agent", "scripted",
                "--script", script, "--json", "-q"],
        "pipeline run": ["pipeline", "run", pipeline, "--workdir", project, "--agent",
                         "scripted", "--script", script, "--json", "-q"],
        "loop": ["loop", "Fix it.", "--promise", "DONE", "--workdir", project, "--agent",
                 "scripted", "--script", script, "--max-iterations", "1", "--json", "-q"],
        "judge": ["judge", EXAMPLE / "task.yaml", "--transcript", TRANSCRIPT, "--workdir",
                  git_checkout(project), "--json"],
        "check": ["check", EXAMPLE / "task.yaml"],
        "plan": ["plan", task, "--workdir", ci_project],
        "execute": ["execute", task, "--workdir", ci_project, "--plan", plan, "--responses",
                    ANSWERS, "--agent", "scripted", "--script", ci_script],
        "report": ["report", tmp_path / "report.json"],
        "github": ["github", report, "--fail-on", "never"],
        "batch report": ["batch", "report", empty_batch_output(tmp_path / "out")],
        "batch run": ["batch", "run", batch_writer(tmp_path / "batch")(), "--out",
                      tmp_path / "batch-out", "--quiet"],
    }  # fmt: skip


@pytest.mark.parametrize(
    "command",
    ["run", "pipeline run", "loop", "judge", "check", "plan", "execute", "report", "github",
     "batch report", "batch run"],
)  # fmt: skip
def test_a_result_that_cannot_reach_standard_output_is_exit_3_and_one_line(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)

    done = to_full_stdout(*commands(tmp_path, project)[command])

    assert done.returncode == 3, done.stderr
    assert one_error_line(done.stderr) == (
        "phasegate: error: cannot write to standard output: No space left on device; free "
        "space on that disk and run again"
    )


@pytest.mark.parametrize("command", ["run", "execute", "pipeline run", "loop", "judge"])
def test_a_log_file_on_a_full_disk_ends_the_run_with_exit_3_naming_it(
    tmp_path: Path, project: Path, command: str
) -> None:
    done = phasegate(*commands(tmp_path, project)[command], "--log-file", FULL)

    assert done.returncode == 3, done.stderr
    assert one_error_line(done.stderr) == (
        f"phasegate: error: cannot write to log file {FULL}: No space left on device; free "
        "space on its disk, or log to another file"
    )


def test_a_log_file_in_a_folder_that_cannot_be_written_is_exit_2_before_any_work(
    tmp_path: Path, project: Path
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    with read_only(logs):
        done = phasegate(*commands(tmp_path, project)["run"], "--log-file", logs / "run.jsonl")

    assert done.returncode == 2, done.stderr
    line = one_error_line(done.stderr)
    assert line.startswith(f"phasegate: error: cannot open log file {logs / 'run.jsonl'}: ")
    assert line.endswith("; make its folder writable, or log to another file")
    assert (project / "app.py").read_text() == (EXAMPLE / "project" / "app.py").read_text()


def test_a_log_file_whose_disk_fills_mid_run_ends_it_with_exit_3_naming_it(
    tmp_path: Path,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The first lines go out; a later one cannot."""
    log = tmp_path / "run.jsonl"
    real_write, lines = os.write, []

    def filling(fd: int, data: bytes) -> int:
        if Path(f"/proc/self/fd/{fd}").resolve() == log.resolve():
            lines.append(data)
            if len(lines) > 2:
                raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", filling)

    done = run_main(capsys, *commands(tmp_path, project)["run"], "--log-file", log)

    assert done.code == 3, done.stderr
    assert one_error_line(done.stderr).startswith(
        f"phasegate: error: cannot write to log file {log}"
    )
    assert len(log.read_text().splitlines()) == 2


def test_too_many_open_files_where_no_command_expects_it_is_exit_3_and_what_to_do(
    tmp_path: Path,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def exhausted(*_: object, **__: object) -> None:
        raise OSError(errno.EMFILE, "Too many open files", str(EXAMPLE / "task.yaml"))

    monkeypatch.setattr("phasegate.phases.loading.load_task", exhausted)

    done = run_main(capsys, *commands(tmp_path, project)["run"])

    assert done.code == 3
    assert one_error_line(done.stderr) == (
        f"phasegate: error: {EXAMPLE / 'task.yaml'}: Too many open files; raise the limit of "
        "open files (ulimit -n) or run fewer at once"
    )


def test_a_real_limit_of_open_files_ends_a_run_with_one_line_not_a_trace(
    tmp_path: Path, project: Path
) -> None:
    """Six descriptors: the interpreter starts, the run's event loop cannot."""
    limited = (
        "import os, resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (6, 6))\n"
        "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])\n"
    )
    args = [str(a) for a in commands(tmp_path, project)["run"]]
    done = subprocess.run(
        [sys.executable, "-c", limited, "-m", "phasegate", *args], capture_output=True,
        text=True, timeout=120, check=False,
    )  # fmt: skip

    assert done.returncode == 3, done.stderr
    assert one_error_line(done.stderr).endswith(
        "Too many open files; raise the limit of open files (ulimit -n) or run fewer at once"
    )


def test_a_report_file_that_cannot_be_written_is_exit_2_and_a_full_disk_exit_3(
    tmp_path: Path,
) -> None:
    """A folder that cannot be written is a path to change; a full disk is the machine's."""
    log = tmp_path / "run.jsonl"
    log.write_text("")
    folder = tmp_path / "reports"
    folder.mkdir()
    with read_only(folder):
        refused = phasegate("report", log, "-o", folder / "report.md")
    full = phasegate("report", log, "-o", FULL)

    assert refused.returncode == 2
    assert one_error_line(refused.stderr).startswith(
        f"phasegate: error: cannot write report to {folder / 'report.md'}: "
    )
    assert one_error_line(refused.stderr).endswith(
        "make its folder writable, or write it elsewhere"
    )
    assert full.returncode == 3
    assert one_error_line(full.stderr) == (
        f"phasegate: error: cannot write report to {FULL}: No space left on device; free space "
        "on that disk and run again"
    )


@pytest.mark.parametrize(
    ("error", "said"),
    [
        (
            OSError("AF_UNIX path too long"),
            "the system refused a file operation: AF_UNIX path too long; a Unix socket's path "
            "may take 107 bytes on Linux, 103 on macOS: set TMPDIR to a shorter folder "
            "(such as /tmp)",
        ),
        (
            OSError(errno.ENAMETOOLONG, "File name too long", "/deep/path"),
            "/deep/path: File name too long; the path is longer than this system allows "
            "(Windows: 260 characters unless long paths are enabled): choose a folder with a "
            "shorter path",
        ),
    ],
)
def test_a_path_too_long_for_the_system_says_the_limit_and_what_to_do(
    tmp_path: Path,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    error: OSError,
    said: str,
) -> None:
    def too_long(*_: object, **__: object) -> None:
        raise error

    monkeypatch.setattr("phasegate.phases.loading.load_task", too_long)

    done = run_main(capsys, *commands(tmp_path, project)["run"])

    assert done.code == 3
    assert one_error_line(done.stderr) == f"phasegate: error: {said}"
