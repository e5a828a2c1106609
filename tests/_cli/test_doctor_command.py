"""``phasegate doctor``: what runs would use here, as a table or one JSON object, and never a
credential's value."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from phasegate._cli.doctor import EXTRAS
from phasegate.agents.claude.cli import bundled_cli_version
from phasegate.agents.claude.credentials import CREDENTIAL_VARS
from phasegate.agents.claude.sandbox import sandbox_problem
from phasegate.agents.claude.window import release_window
from phasegate.testing.pytest_plugin import bundled_cli_path

ROOT = Path(__file__).resolve().parents[2]
SECRET = "sk-ant-api03-doctor-must-never-print-this"
KEYS = {
    "schema_version", "phasegate", "claude_code", "claude_agent_sdk", "window", "python",
    "extras", "credentials", "sandbox",
}  # fmt: skip


def doctor(
    *args: str | Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``phasegate doctor ARGS`` in a subprocess, with ANTHROPIC_API_KEY set to a secret and
    no other credential variable, unless ``env`` says otherwise."""
    blank = dict.fromkeys(CREDENTIAL_VARS, "")
    return subprocess.run(
        [sys.executable, "-m", "phasegate", "doctor", *map(str, args)],
        env={**os.environ, **blank, "ANTHROPIC_API_KEY": SECRET, **(env or {})},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """An empty HOME and Claude Code config directory."""
    return {"HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": str(tmp_path / ".claude")}


def bundled_or_skip() -> Path:
    """The CLI bundled with claude-agent-sdk (the test is skipped without it)."""
    bundled = bundled_cli_path()
    if bundled is None:
        pytest.skip("the Claude Code CLI bundled with claude-agent-sdk is not installed")
    return bundled


def test_the_table_names_the_cli_its_version_the_window_and_the_credential_kind(
    home: dict[str, str],
) -> None:
    """One aligned row per fact; the key's variable is named, its value never printed."""
    bundled = bundled_or_skip()

    done = doctor(env=home)

    assert done.returncode == 0, done.stderr
    assert SECRET not in done.stdout + done.stderr
    lines = done.stdout.splitlines()
    column = len("claude-agent-sdk  ")  # the longest label, then two spaces
    assert all(line[column - 2 : column] == "  " and line[column] != " " for line in lines)
    values = {line[:column].strip(): line[column:] for line in lines}
    sandbox_rows = (
        ["sandbox", "bubblewrap", "socat", "user namespaces", "seccomp"]
        if sys.platform.startswith("linux")
        else ["sandbox"]
    )
    assert list(values) == [
        "phasegate", "Claude Code CLI", "claude --version", "claude-agent-sdk",
        "tested window", "Python", "extras", "credentials", *sandbox_rows,
    ]  # fmt: skip
    assert values["Claude Code CLI"] == f"{bundled} (bundled with claude-agent-sdk)"
    assert values["claude --version"] == f"{bundled_cli_version()} (Claude Code)"
    assert values["tested window"].startswith("inside (Claude Code ")
    assert values["Python"].startswith(platform.python_version())
    assert values["extras"] == "serve yes, client yes, ray yes, otel yes"
    assert values["credentials"] == "ANTHROPIC_API_KEY"


def test_json_is_one_object_with_the_documented_keys(home: dict[str, str]) -> None:
    """--json: the stable keys, the same facts, and still no secret."""
    bundled = bundled_or_skip()

    done = doctor("--json", env=home)

    assert done.returncode == 0, done.stderr
    assert SECRET not in done.stdout + done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    assert set(found) == KEYS
    assert found["claude_code"] == {
        "path": str(bundled),
        "source": "bundled",
        "version_output": f"{bundled_cli_version()} (Claude Code)",
        "version": bundled_cli_version(),
    }
    window = release_window()
    assert found["window"]["status"] == "inside" and found["window"]["inside"] is True
    assert found["window"]["claude_code"] == {
        "oldest": window.oldest_claude_code,
        "newest": window.newest_claude_code,
    }
    assert found["python"]["version"] == platform.python_version()
    assert found["python"]["tested"] is True
    assert found["sandbox"]["can_run"] is (sandbox_problem() is None)
    assert found["extras"] == dict.fromkeys(EXTRAS, True)
    assert found["credentials"] == {"variables": ["ANTHROPIC_API_KEY"], "login_file": None}


def test_a_claude_code_login_is_named_by_its_file_never_read(tmp_path: Path) -> None:
    """The login file's path is shown; what is inside it is not."""
    login = tmp_path / ".claude" / ".credentials.json"
    login.parent.mkdir()
    login.write_text(json.dumps({"claudeAiOauth": {"accessToken": SECRET}}))
    env = {"HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": "", "ANTHROPIC_API_KEY": ""}

    done = doctor("--json", env=env)
    table = doctor(env=env)

    assert SECRET not in done.stdout + done.stderr + table.stdout + table.stderr
    assert json.loads(done.stdout)["credentials"] == {"variables": [], "login_file": str(login)}
    assert f"Claude Code login ({login})" in table.stdout


def test_a_cli_path_newer_than_the_window_is_reported_outside_and_still_exits_zero(
    tmp_path: Path, home: dict[str, str]
) -> None:
    """Outside the window is a warning, not an error: status newer with what to do, exit 0."""
    cli = tmp_path / "claude"
    cli.write_text("#!/bin/sh\necho '9.9.9 (Claude Code)'\n")
    cli.chmod(0o755)

    done = doctor("--json", "--cli-path", cli, env=home)

    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["claude_code"]["source"] == "cli_path"
    assert found["claude_code"]["version"] == "9.9.9"
    assert found["window"]["status"] == "newer" and found["window"]["inside"] is False
    assert "pin claude-agent-sdk to a tested release" in found["window"]["message"]


def test_with_no_cli_anywhere_it_still_reports_and_exits_two(tmp_path: Path) -> None:
    """No bundled CLI (patched away in the child) and nothing on PATH: the report, with no
    path, then the error and exit code 2, as ``claude-cli`` and ``run`` do."""
    code = (
        "import sys; from phasegate.agents.claude import cli; "
        "cli.bundled_claude_cli = lambda: None; "
        "from phasegate._cli.app import main; sys.argv = ['phasegate', 'doctor', '--json']; main()"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False,
        env={"PATH": str(tmp_path), "HOME": str(tmp_path), "ANTHROPIC_API_KEY": SECRET},
    )  # fmt: skip

    assert done.returncode == 2, done.stderr
    found = json.loads(done.stdout)
    assert found["claude_code"] == {
        "path": None, "source": None, "version_output": None, "version": None,
    }  # fmt: skip
    assert found["window"]["status"] == "unknown"
    if sys.platform.startswith("linux"):  # nothing on PATH: no bubblewrap, no socat
        assert found["sandbox"]["can_run"] is False
        assert found["sandbox"]["bwrap"] is None and found["sandbox"]["socat"] is None
        assert "apt-get install bubblewrap socat" in found["sandbox"]["problem"]
    assert "phasegate: error: no Claude Code CLI found" in done.stderr
    assert "Traceback" not in done.stderr and SECRET not in done.stdout + done.stderr


def test_asking_imports_neither_claude_agent_sdk_nor_the_extras() -> None:
    """Versions come from files and metadata: the 0.6 s SDK import and the extras stay out."""
    code = (
        "import sys; from phasegate._cli.doctor import diagnose; diagnose(); "
        "print([m for m in ('claude_agent_sdk', 'fastapi', 'httpx', 'ray', 'opentelemetry') "
        "if m in sys.modules])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )

    assert done.stdout.strip() == "[]"


def test_the_extras_it_checks_are_the_ones_pyproject_offers() -> None:
    """Each extra of pyproject.toml with the distributions it installs (dev and docs aside:
    they build and test phasegate, and no run needs them)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    offered = {
        extra: tuple(requirement.split(">")[0].split("=")[0] for requirement in requirements)
        for extra, requirements in project["optional-dependencies"].items()
        if extra not in ("dev", "docs")
    }

    assert offered == EXTRAS
