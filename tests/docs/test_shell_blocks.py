"""Every shell example of the README and of docs/ is run by a test, or says why not in an
HTML comment on the line before it (``<!-- not run by a test: REASON -->``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from phasegate.testing.pytest_plugin import bundled_cli_path

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(
    r"^(?:(<!-- not run by a test: [^\n]+ -->)\n)?```(?:sh|bash|shell)\n(.*?)^```", re.S | re.M
)

# Run by another test: the same commands, called as that test says.
RUN_ELSEWHERE = {
    ("README.md", 0): "make test is CI's own command (.ci/run); make demo runs `phasegate demo`, "
    "run by tests/_cli/test_cli.py::test_demo_shows_the_rejection_and_the_gated_acceptance",
    ("docs/index.md", 0): "the README's two commands, as above",
    ("README.md", 3): "tests/examples/test_batch_example.py runs the batch and its report; "
    "tests/batches/test_batch_runner.py::test_a_second_run_skips_every_finished_unit the rerun",
    ("docs/batch.md", 0): "the README's batch block, as above",
    ("docs/judging.md", 0): "tests/_cli/test_claude_cli_command.py::"
    "test_the_judging_page_example_runs_as_written",
    ("docs/plan-execute.md", 0): "tests/examples/test_decision_record_example.py::"
    "test_plan_ask_and_execute_record_the_decision_with_only_the_inputs_that_applied "
    "(the same calls; answers.json is written between the turns)",
}

# Run here, as written, from the repository's root.
RUN_HERE = {
    ("README.md", 1): "fix-vulnerability: ACCEPTED (gate, 2 gate check(s))\n",
    ("README.md", 2): "fix-vulnerability: ACCEPTED (gate, 2 gate check(s))\n",
    ("docs/pipelines.md", 0): "prd-to-code: ACCEPTED (session isolation, 1 session(s), ",
    ("docs/pipelines.md", 1): "3 level(s), 4 branch(es), at most 3 at once; a stage starts ",
}


def shell_blocks() -> dict[tuple[str, int], tuple[str | None, str]]:
    """Each shell block, by page and index: its "not run" comment (or None) and its code."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return {
        (str(page.relative_to(ROOT)), index): (mark or None, code)
        for page in pages
        for index, (mark, code) in enumerate(BLOCK.findall(page.read_text(encoding="utf-8")))
    }


def test_every_shell_block_is_run_by_a_test_or_says_why_not() -> None:
    """A new example without a test or a reason fails here; so does a block that is both
    marked and run, and a registered block that moved."""
    blocks = shell_blocks()
    assert len(blocks) >= 20, "the pattern is stale"
    run = set(RUN_ELSEWHERE) | set(RUN_HERE)
    assert run <= set(blocks)
    assert {key for key, (mark, _) in blocks.items() if mark is None} == run
    assert blocks["README.md", 0][1].startswith("make demo")
    assert blocks["docs/index.md", 0][1] == blocks["README.md", 0][1].replace(
        "the test suite and the docs site (make docs)", "the test suite and this site"
    )
    for page in ("README.md", "docs/batch.md"):
        batch = blocks[page, 3 if page == "README.md" else 0][1]
        assert batch.startswith("phasegate batch run examples/batch/batch.yaml --out results")
    assert "cd examples/decision-record" in blocks["docs/plan-execute.md", 0][1]


@pytest.mark.cli
@pytest.mark.parametrize("key", sorted(RUN_HERE))
def test_the_offline_examples_run_as_written(key: tuple[str, int]) -> None:
    """bash runs the block from the repository's root, offline: the real Claude Code CLI
    against phasegate's scripted model. ``.venv/bin/`` is this interpreter's folder."""
    if bundled_cli_path() is None:
        pytest.skip("the Claude Code CLI bundled with claude-agent-sdk is not installed")
    code = shell_blocks()[key][1].replace(".venv/bin/", f"{Path(sys.executable).parent}/")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", code],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(RUN_HERE[key])
