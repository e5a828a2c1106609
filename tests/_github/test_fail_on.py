"""fail_on decides whether the step fails; a failing step exits with the run's code, never 0."""

from __future__ import annotations

import pytest

from phasegate._github.fail_on import FailOn, exit_status
from phasegate.modes import ReportVerdict

MATRIX = [
    # verdict, fail_on, run's exit code, step's exit status
    ("accepted", "rejected", 0, 0),
    ("accepted", "error", 0, 0),
    ("accepted", "never", 0, 0),
    ("rejected", "rejected", 1, 1),
    ("rejected", "error", 1, 0),
    ("rejected", "never", 1, 0),
    ("error", "rejected", 3, 3),
    ("error", "error", 3, 3),
    ("error", "never", 3, 0),
    ("error", "rejected", 2, 2),
    ("error", "error", 2, 2),
    ("running", "rejected", 3, 3),
    ("running", "error", 3, 3),
    ("running", "never", 3, 0),
    ("rejected", "rejected", 0, 1),
    ("error", "error", 0, 3),
    ("running", "error", 0, 3),
]


@pytest.mark.parametrize(("verdict", "fail_on", "code", "status"), MATRIX)
def test_the_step_fails_as_fail_on_says_with_the_runs_exit_code(
    verdict: ReportVerdict, fail_on: FailOn, code: int, status: int
) -> None:
    assert exit_status(verdict, code, fail_on) == status
