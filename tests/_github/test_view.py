"""The view every GitHub output is written from says nothing its report contradicts."""

from __future__ import annotations

import shutil
from pathlib import Path

from phasegate import Runner
from phasegate._github.view import read_report_view
from phasegate.phases.loading import load_task
from phasegate.testing import ScriptedAgent
from tests.helpers.batch_dirs import GOOD, LAZY
from tests.helpers.checked_runs import prove_the_fix
from tests.helpers.github_reports import write_report
from tests.helpers.scenarios import EXAMPLE


def _report_file(tmp_path: Path, *, lazy: bool) -> Path:
    """The report of the example task run in single-query mode by the lazy model (which
    claims the fix without making it: rejected) or the good one (accepted)."""
    work = tmp_path / "work"
    shutil.copytree(EXAMPLE / "project", work)
    agent = ScriptedAgent(LAZY if lazy else GOOD)
    report = Runner(agent, mode="single-query").run_sync(load_task(EXAMPLE / "task.yaml"), work)
    assert report.verdict == ("rejected" if lazy else "accepted")
    return write_report(tmp_path / "report.json", report)


def test_a_rejected_phase_reads_as_claimed_complete_not_as_completed(tmp_path: Path) -> None:
    """The lazy model's edit phase had its marker, and the gate rejected it: the step's table
    said "rejected" and "by marker" side by side; it says "claimed by marker"."""
    view = read_report_view(_report_file(tmp_path, lazy=True))

    edit = view.rows[0]
    assert (edit.status, edit.how) == ("rejected", "claimed by marker")
    assert all(row.how.startswith("claimed by ") for row in view.rows if row.how)


def test_an_accepted_phase_reads_as_completed_by_its_marker(tmp_path: Path) -> None:
    view = read_report_view(_report_file(tmp_path, lazy=False))

    assert [(row.status, row.how) for row in view.rows] == [
        ("accepted", "by marker"),
        ("accepted", "by text"),
    ]


def test_an_accepted_report_after_a_failing_exit_code_is_an_error_not_a_success(
    tmp_path: Path,
) -> None:
    """The outputs said verdict=accepted, success=true and exit_code=2 at once (and the step
    passed); the view is an error with both facts in its message, and keeps the code."""
    view = read_report_view(_report_file(tmp_path, lazy=False), exit_code=2)

    assert (view.verdict, view.exit_code) == ("error", 2)
    assert view.error is not None and "exited 2, but its report says accepted" in view.error
    assert [row.status for row in view.rows] == ["accepted", "accepted"]  # the report's facts


def test_a_rejected_report_after_exit_code_0_is_an_error(tmp_path: Path) -> None:
    view = read_report_view(_report_file(tmp_path, lazy=True), exit_code=0)

    assert (view.verdict, view.exit_code) == ("error", 0)


def test_a_report_and_an_exit_code_that_agree_are_shown_as_they_are(tmp_path: Path) -> None:
    """Rejected with 1 (or 3: both say it failed) and accepted with 0 keep their verdict."""
    rejected = _report_file(tmp_path, lazy=True)

    assert read_report_view(rejected, exit_code=1).verdict == "rejected"
    assert read_report_view(rejected, exit_code=3).verdict == "rejected"
    assert read_report_view(rejected).error is None


def test_a_real_runs_checks_are_read_phase_by_phase_as_the_report_keeps_them(
    tmp_path: Path,
) -> None:
    """prove-the-fix: its one phase check, as the gate last ran it (passing, at the second
    judgment), with its output, and the time the run spent in checks."""
    run = prove_the_fix(tmp_path)
    (decided,) = run.report.phases[0].checks

    view = read_report_view(write_report(tmp_path / "report.json", run.report))

    (check,) = view.checks
    assert (check.where, check.passed) == ("phase 1 (fix)", True)
    assert check.description == decided.description
    assert (check.kind, check.exit_code, check.run) == ("command", 0, 2)
    assert check.output == decided.detail and "Ran 2 tests" in check.output
    assert view.check_ms == run.report.check_ms > 0
