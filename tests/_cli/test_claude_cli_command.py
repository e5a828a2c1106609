"""``phasegate claude-cli``: the documented way to run the Claude Code CLI phasegate bundles."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from phasegate.agents.claude import cli
from phasegate.agents.scripted.script import Script
from phasegate.testing.pytest_plugin import ScriptedServerFactory, bundled_cli_path
from tests.helpers.cli import phasegate
from tests.helpers.scenarios import EDIT, EXAMPLE, FIXED_LINE, GOOD_JSON, MARKER, READ
from tests.helpers.wild import git


def test_the_printed_path_is_an_executable_claude_code_that_answers_version() -> None:
    """``"$(phasegate claude-cli)" --version`` works where a bare ``claude`` may not exist."""
    bundled = bundled_cli_path()
    if bundled is None:
        pytest.skip("the Claude Code CLI bundled with claude-agent-sdk is not installed")

    done = phasegate("claude-cli")

    assert done.returncode == 0, done.stderr
    printed = Path(done.stdout.strip())
    assert printed == bundled
    assert os.access(printed, os.X_OK)
    version = subprocess.run(
        [str(printed), "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert version.returncode == 0, version.stderr
    assert "Claude Code" in version.stdout


def test_without_a_bundled_cli_the_one_on_path_is_used(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The same order claude-agent-sdk uses: bundled first, then ``claude`` on PATH."""
    on_path = tmp_path / "claude"
    on_path.write_text("#!/bin/sh\necho 1.0 '(Claude Code)'\n")
    on_path.chmod(0o755)
    monkeypatch.setattr(cli, "bundled_claude_cli", lambda: None)
    monkeypatch.setenv("PATH", str(tmp_path))

    assert cli.find_claude_cli() == on_path


def test_with_no_cli_anywhere_the_command_exits_two_saying_what_to_install(
    tmp_path: Path,
) -> None:
    """No bundled CLI (patched away in the child) and nothing on PATH: exit 2, no traceback."""
    code = (
        "import sys; from phasegate.agents.claude import cli; "
        "cli.bundled_claude_cli = lambda: None; "
        "from phasegate._cli.app import main; sys.argv = ['phasegate', 'claude-cli']; main()"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True,
        env={"PATH": str(tmp_path)}, timeout=60, check=False,
    )  # fmt: skip

    assert done.returncode == 2, done.stderr
    assert "no Claude Code CLI found" in done.stderr
    assert "Traceback" not in done.stderr


JUDGING = Path(__file__).resolve().parents[2] / "docs" / "judging.md"


def judging_page_example() -> str:
    """The first shell block of docs/judging.md, the "Judging a saved transcript" page."""
    section = JUDGING.read_text()
    match = re.search(r"```sh\n(.*?)```", section, re.S)
    assert match is not None, "docs/judging.md has no sh block"
    return match.group(1)


@pytest.mark.cli
def test_the_judging_page_example_runs_as_written(
    scripted_model_server: ScriptedServerFactory, tmp_path: Path
) -> None:
    """Both commands of docs/judging.md, run by bash in a checkout, offline against the scripted
    model: the bundled CLI edits the file, and judging its transcript accepts the run."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    shutil.copy(EXAMPLE / "project" / "app.py", checkout / "app.py")
    shutil.copy(EXAMPLE / "task.yaml", checkout / "task.yaml")
    git(checkout, "init", "-q")
    git(checkout, "add", ".")
    git(checkout, "commit", "-qm", "start")
    start = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=checkout, capture_output=True, text=True, check=True
    ).stdout.strip()
    server = scripted_model_server(
        Script.model_validate({"replies": [
            {"tools": [READ]},
            {"tools": [EDIT]},
            {"text": f"{MARKER}\n\n{GOOD_JSON}"},
        ]})
    )  # fmt: skip
    env = {
        **server.env(home=tmp_path / "home", timeout_ms=30_000),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "START_SHA": start,
    }

    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", judging_page_example()],
        cwd=checkout, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip

    assert done.returncode == 0, done.stdout + done.stderr
    assert "ACCEPTED" in done.stdout
    assert (checkout / "app.py").read_text().count(FIXED_LINE) == 1
