"""examples/prove-the-fix through the real CLI: the lazy model's wrong fix (add() made to
multiply) passes every rule but the phase's check, is sent back with the tests' own output,
and the right fix is accepted; the tests stay the author's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers.cli import phasegate

pytestmark = pytest.mark.cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "prove-the-fix"


def test_the_wrong_fix_is_caught_only_by_the_check_and_the_right_one_is_accepted(
    tmp_path: Path,
) -> None:
    work = tmp_path / "project"
    shutil.copytree(EXAMPLE / "project", work)
    log = tmp_path / "events.jsonl"

    done = phasegate(
        "run", EXAMPLE / "task.yaml", "--workdir", work,
        "--model-script", EXAMPLE / "model.yaml", "--json", "--log-file", log,
    )  # fmt: skip

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(done.stdout)
    fix = report["phases"][0]
    assert fix["attempts"] == 2
    (check,) = fix["checks"]
    assert check["passed"] and check["exit_code"] == 0 and check["run"] == 2
    assert "return a + b" in (work / "calc.py").read_text()
    assert report["files_changed"] == ["calc.py"]
    events = [json.loads(line) for line in log.read_text().splitlines()]
    gates = [e for e in events if e["event"] == "phase.gate" and e["phase"] == 1]
    # The first claim broke no other rule: the check alone refused it.
    assert gates[0]["issues"] == ["check_failed"]
    ran = [e for e in events if e["event"] == "check.ran"]
    assert [(e["passed"], e["exit_code"]) for e in ran] == [(False, 1), (True, 0)]
    assert report["check_ms"] == sum(e["duration_ms"] for e in ran)


def test_the_example_protects_its_tests_so_check_gives_no_warning() -> None:
    done = phasegate("check", EXAMPLE / "task.yaml")
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr
    assert "Checked by the gate when you mark this phase complete" in done.stdout


def test_plan_and_execute_run_the_checks_and_the_result_line_carries_them(
    tmp_path: Path,
) -> None:
    """The two-phase API on a task with checks: the plan is ready at once (no inputs), and
    execute's result line holds the report with the check that decided and the check.ran
    progress lines before it."""
    work = tmp_path / "project"
    shutil.copytree(EXAMPLE / "project", work)
    plan = tmp_path / "plan.json"
    planned = phasegate("plan", EXAMPLE / "task.yaml", "--workdir", work)
    assert planned.returncode == 0, planned.stderr
    plan.write_text(planned.stdout)

    done = phasegate(
        "execute", EXAMPLE / "task.yaml", "--workdir", work, "--plan", plan,
        "--model-script", EXAMPLE / "model.yaml",
    )  # fmt: skip

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    *progress, result = [json.loads(line) for line in done.stdout.splitlines()]
    assert [p["event"] for p in progress].count("check.ran") == 2
    assert result["verdict"] == "accepted"
    assert result["report"]["phases"][0]["checks"][0]["passed"] is True
