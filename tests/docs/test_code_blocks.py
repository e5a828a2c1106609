"""Every Python block of the README and of docs/ is type-checked as a reader would copy it;
the runnable ones are also executed (see the tests listed in EXECUTED)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)

# Blocks that run as written, and the test that runs each (page, index of the block).
EXECUTED = {
    ("README.md", 0): "tests/test_public_api.py::test_the_first_python_example_runs_as_written",
    (
        "docs/python.md",
        0,
    ): "tests/test_public_api.py::test_the_first_python_example_runs_as_written",
    ("docs/testing.md", 0): "tests/testing/test_pytest_plugin.py (run by pytest in a project)",
}

# What a block takes from the text around it (an agent built earlier on the page, the task it
# loaded), declared by type so that the block is checked as it stands.
ASSUMES = {
    ("docs/python.md", 1): "from phasegate import Runner, Task\ntask: Task\n",
    ("docs/events.md", 0): "from phasegate import Agent, Task\nagent: Agent\ntask: Task\n",
    ("docs/plan-execute.md", 0): "from phasegate import Agent\nagent: Agent\n",
}


def python_blocks() -> dict[tuple[str, int], str]:
    """Each ```python block of the README and of every page under docs/, by page and index."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return {
        (str(page.relative_to(ROOT)), index): code
        for page in pages
        for index, code in enumerate(BLOCK.findall(page.read_text(encoding="utf-8")))
    }


def test_the_executed_blocks_are_still_where_their_tests_find_them() -> None:
    """A block that moved would leave its test running something else."""
    blocks = python_blocks()
    assert set(EXECUTED) | set(ASSUMES) <= set(blocks)
    assert "load_task(" in blocks["README.md", 0]
    assert blocks["README.md", 0] == blocks["docs/python.md", 0]
    assert "def test_my_task_is_accepted(" in blocks["docs/testing.md", 0]


def test_every_python_block_type_checks_as_written(tmp_path: Path) -> None:
    """mypy (without the project's --strict: users' code need not annotate everything, but
    untyped functions are checked) finds no error in any block, each a module of its own."""
    blocks = python_blocks()
    assert len(blocks) >= 8, "the pattern is stale"
    files = []
    for (page, index), code in blocks.items():
        path = tmp_path / f"{re.sub(r'[^a-z0-9]', '_', page.lower())}_{index}.py"
        path.write_text(ASSUMES.get((page, index), "") + code, encoding="utf-8")
        files.append(str(path))
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\ncheck_untyped_defs = True\nwarn_unused_ignores = True\n")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(config), "--python-version", "3.11",
         "--cache-dir", str(tmp_path / "cache"), "--no-error-summary", *files],
        cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False,
        env={"MYPYPATH": str(ROOT / "src"), "PATH": str(Path(sys.executable).parent)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
