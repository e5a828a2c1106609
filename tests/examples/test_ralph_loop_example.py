"""examples/ralph-loop: Ralph's own state file, run as a loop through the real Claude Code CLI
against the scripted model."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli import phasegate

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ralph-loop"
STATE = Path(".claude") / "ralph-loop.local.md"


@pytest.mark.cli
def test_the_ralph_loop_example_says_its_promise_on_iteration_two_with_the_tests_passing(
    tmp_path: Path,
) -> None:
    """One bug fixed per iteration; the promise said in prose ends the loop; Ralph's state
    file is read, never changed."""
    work = shutil.copytree(EXAMPLE / "project", tmp_path / "work")
    before = (work / STATE).read_text()
    done = phasegate(
        "loop", "--state", work / STATE, "--workdir", work,
        "--model-script", EXAMPLE / "model.yaml", "--json", "-q",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["pipeline"], report["verdict"]) == ("ralph-loop", "accepted")
    assert (report["iterations"], report["max_iterations"], report["promise"]) == (
        2,
        5,
        "TESTS PASS",
    )
    assert (work / STATE).read_text() == before
    tests = subprocess.run(
        [sys.executable, "-m", "unittest", "test_calc"], cwd=work, capture_output=True, check=False
    )
    assert tests.returncode == 0, tests.stderr
