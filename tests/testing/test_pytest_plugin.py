"""The pytest fixtures, used as docs/testing.md shows: its example runs as written and passes."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from phasegate.testing.pytest_plugin import bundled_cli_path
from tests.helpers.scenarios import EXAMPLE

PAGE = Path(__file__).resolve().parents[2] / "docs" / "testing.md"
INTRO = "With phasegate installed, pytest gets two fixtures"


def page_example() -> str:
    """The first ```python block after the paragraph that introduces the fixtures."""
    text = PAGE.read_text(encoding="utf-8")
    after = text[text.index(INTRO) :]
    found = re.search(r"```python\n(.*?)```", after, re.S)
    assert found is not None, "docs/testing.md's pytest example is missing"
    return found.group(1)


@pytest.mark.cli
def test_the_testing_page_pytest_example_passes_as_written(tmp_path: Path) -> None:
    """In a project laid out as the example expects (the example task, project and lazy
    model), a plain pytest run finds the fixtures through the entry point and the test
    passes: the gate gets the lazy model's fix done."""
    if bundled_cli_path() is None:
        pytest.skip("the Claude Code CLI bundled with claude-agent-sdk is not installed")
    shutil.copytree(EXAMPLE / "project", tmp_path / "my-project")
    shutil.copy(EXAMPLE / "task.yaml", tmp_path / "my-task.yaml")
    (tmp_path / "tests").mkdir()
    shutil.copy(EXAMPLE / "model.yaml", tmp_path / "tests" / "my-model.yaml")
    (tmp_path / "test_my_task.py").write_text(page_example(), encoding="utf-8")
    original = (tmp_path / "my-project" / "app.py").read_text()

    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         f"--basetemp={tmp_path / 'pytest'}", "test_my_task.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip

    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert (tmp_path / "my-project" / "app.py").read_text() == original  # a copy was edited
