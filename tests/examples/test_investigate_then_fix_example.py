"""examples/investigate-then-fix offline through the real CLI: the edit during the read-only
investigation and the edit of the protected test are refused before they run, the code is
fixed, the tests are untouched and pass, and the run is accepted."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli import phasegate

pytestmark = pytest.mark.cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "investigate-then-fix"


def test_both_shortcuts_are_refused_and_the_fix_passes_the_protected_tests(
    tmp_path: Path,
) -> None:
    work = shutil.copytree(EXAMPLE / "project", tmp_path / "project")
    done = phasegate(
        "run", EXAMPLE / "task.yaml", "--workdir", work,
        "--model-script", EXAMPLE / "model.yaml", "--json", "-q",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["verdict"] == "accepted"
    investigate, fix, _ = report["phases"]
    ((early,), (protected,)) = investigate["refusals"], fix["refusals"]
    assert early["tool"] == "Edit" and early["input"].endswith("app.py")
    assert "phase 1 (investigate)" in early["reason"]
    assert protected["tool"] == "Edit" and "protected by `tests/**`" in protected["reason"]
    assert report["files_changed"] == ["app.py"]
    assert (work / "tests" / "test_app.py").read_bytes() == (
        EXAMPLE / "project" / "tests" / "test_app.py"
    ).read_bytes()
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
         "tests"],
        cwd=work, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert tests.returncode == 0, tests.stdout[-2000:]
