"""What the action tests share: the example project as a git checkout, the runs recorded for
judge mode, and reading what a run of the action left behind."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any, Protocol

from phasegate._github.outputs import OUTPUT_NAMES
from tests.helpers.composite import CompositeAction

REPO = Path(__file__).resolve().parents[2]
"""The repository root: the action's own checkout (``github.action_path``)."""
EXAMPLE = REPO / "examples" / "fix-vulnerability"
FIXTURES = REPO / "tests" / "fixtures" / "action"
"""Recorded execution files and the scripts that recorded them."""
RECORDED_CWD = "/home/runner/work/project/project"
"""The working directory the recorded runs name (a GitHub-hosted runner's checkout)."""
EVAL_LINE = "    return eval(expression)  # runs any Python the user sends, not just arithmetic\n"
FIXED_LINE = "    return float(expression)  # numbers only\n"
"""The edit the good recorded run makes in app.py."""


def git(work: Path, *args: str) -> str:
    """Run git in ``work`` with a fixed identity; its stdout (the test fails on error)."""
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=work, check=True, capture_output=True, text=True,
    )  # fmt: skip
    return done.stdout.strip()


def project_checkout(work: Path) -> str:
    """``work`` as a git repository of the example project, committed; the commit's sha."""
    shutil.copytree(EXAMPLE / "project", work)
    git(work, "init", "-q")
    git(work, "add", ".")
    git(work, "commit", "-qm", "start")
    return git(work, "rev-parse", "HEAD")


def apply_fix(work: Path) -> None:
    """Make on disk the edit the good recorded run made."""
    app = work / "app.py"
    text = app.read_text()
    assert EVAL_LINE in text
    app.write_text(text.replace(EVAL_LINE, FIXED_LINE))


def report_of(outputs: dict[str, str]) -> dict[str, Any]:
    """The JSON report the action's ``report_file`` output names."""
    loaded: dict[str, Any] = json.loads(Path(outputs["report_file"]).read_text())
    return loaded


OUTPUTS = OUTPUT_NAMES
"""Every output of the action, in the contract's order."""


def usage_outputs(report: dict[str, Any]) -> dict[str, str]:
    """The cost, token and duration outputs a report's own figures give (the grader's: 0
    when no grader ran)."""
    usage = report["usage"]
    cost = usage.get("cost_usd")
    graded = report.get("grader_usage") or {}
    grader_cost = graded.get("cost_usd")
    no_grader = not any(graded.get(name) for name in usage) and not grader_cost
    return {
        "total_cost_usd": _usd(cost),
        "input_tokens": str(usage["input_tokens"]),
        "output_tokens": str(usage["output_tokens"]),
        "cache_read_tokens": str(usage["cache_read_input_tokens"]),
        "cache_write_tokens": str(usage["cache_creation_input_tokens"]),
        "grader_cost_usd": "0" if no_grader else _usd(grader_cost),
        "grader_input_tokens": str(graded.get("input_tokens", 0)),
        "grader_output_tokens": str(graded.get("output_tokens", 0)),
        "duration_ms": str(report["duration_ms"]),
    }


def _usd(cost: float | None) -> str:
    return "" if cost is None else f"{cost:.6f}".rstrip("0").rstrip(".")


def assert_outputs(outputs: dict[str, str], expected: dict[str, str]) -> None:
    """Every output is set and equals ``expected`` (which names every output)."""
    assert tuple(outputs) == OUTPUTS
    assert set(expected) == set(OUTPUTS), set(OUTPUTS) ^ set(expected)
    wrong = {
        name: (outputs[name], expected[name]) for name in OUTPUTS if outputs[name] != expected[name]
    }
    assert wrong == {}, wrong


class ActionFactory(Protocol):
    """The ``make_action`` fixture."""

    def __call__(self, *, sha: str = ..., file_commands: Path | None = None) -> CompositeAction:
        """The action in the test's workspace, in a job started from commit ``sha``."""
