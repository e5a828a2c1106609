"""``phasegate judge --no-checks`` judges without running the task's checks: every view of its
report says so, not only the JSON's ``checks_skipped``. An ACCEPTED line with the author's
tests never run must not read like an accepted run whose tests passed, in the terminal or in
the job summary of a CI run; and a judgment that ran them says how they went."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers.cli import phasegate
from tests.helpers.scenarios import EXAMPLE

TRANSCRIPTS = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
APP = "def parse(x):\n    return eval(x)\n"
"""app.py as the recorded run found it."""

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="judge needs git")


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A git repository holding app.py as the recorded run started from, committed, then
    the run's edit on disk."""
    work = tmp_path / "checkout"
    work.mkdir()
    (work / "app.py").write_text(APP)
    for args in (["init", "-q"], ["add", "app.py"], ["commit", "-qm", "start"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
            cwd=work, check=True, capture_output=True,
        )  # fmt: skip
    (work / "app.py").write_text(APP.replace("eval(x)", "int(x)"))
    return work


@pytest.fixture
def task(tmp_path: Path) -> Path:
    """The example task with a command check on its edit phase (the author's tests)."""
    check = "    checks:\n      - command: [python3, -c, 'pass']\n"
    original = (EXAMPLE / "task.yaml").read_text()
    text = original.replace("    require_changes: true\n", f"    require_changes: true\n{check}", 1)
    checked = tmp_path / "checked-task.yaml"
    checked.write_text(text)
    return checked


def judge(task: Path, checkout: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return phasegate(
        "judge", task, "--transcript", TRANSCRIPTS / "edit_then_json.jsonl",
        "--workdir", checkout, *extra,
    )  # fmt: skip


def test_the_text_report_of_a_judgment_without_checks_says_they_were_not_run(
    task: Path, checkout: Path
) -> None:
    done = judge(task, checkout, "--no-checks")

    assert done.returncode == 0, done.stdout + done.stderr
    assert "ACCEPTED" in done.stdout
    assert "checks not run (--no-checks)" in done.stdout


def test_the_text_report_of_a_judgment_with_checks_says_how_they_went(
    task: Path, checkout: Path
) -> None:
    done = judge(task, checkout)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "checks: 1 of 1 passed" in done.stdout


def test_the_job_summary_of_a_judgment_without_checks_says_they_were_not_run(
    task: Path, checkout: Path, tmp_path: Path
) -> None:
    done = judge(task, checkout, "--no-checks", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["checks_skipped"] is True
    report = tmp_path / "report.json"
    report.write_text(done.stdout)
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs.txt"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")},
        "GITHUB_ACTIONS": "true",
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_OUTPUT": str(outputs),
    }

    shown = phasegate("github", report, env=env)

    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "Checks not run" in summary.read_text()
