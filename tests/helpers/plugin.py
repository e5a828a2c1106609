"""Running the bundled Claude Code CLI with phasegate's plugin loaded (``--plugin-dir`` at the
repository root), in print mode, against a scripted model server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from phasegate.agents.claude.cli import bundled_claude_cli
from phasegate.testing import ScriptedModelServer

ROOT = Path(__file__).resolve().parents[2]
"""The repository: the marketplace, and the plugin its ``./`` source names."""


def claude() -> Path:
    """The CLI claude-agent-sdk bundles (the test is skipped without one)."""
    cli = bundled_claude_cli()
    if cli is None:
        pytest.skip("claude-agent-sdk's bundled CLI is not installed")
    return cli


@dataclass(frozen=True, slots=True)
class Session:
    """One ``claude -p`` with the plugin: its exit code, its stream-json messages, stderr."""

    code: int
    messages: list[dict[str, Any]]
    stderr: str

    @property
    def session_id(self) -> str:
        """The session's id, as the init message gives it."""
        return str(next(m["session_id"] for m in self.messages if "session_id" in m))

    @property
    def result(self) -> dict[str, Any]:
        """The final result message."""
        return next(m for m in reversed(self.messages) if m["type"] == "result")

    def texts(self) -> list[str]:
        """Every text block of the assistant's messages and the user's (hook feedback)."""
        found = []
        for message in self.messages:
            content = (message.get("message") or {}).get("content")
            if isinstance(content, list):
                found += [b.get("text", "") for b in content if b.get("type") == "text"]
            elif isinstance(content, str):
                found.append(content)
        return found


def plugin_env(
    server: ScriptedModelServer, home: str | None = None, **extra: str
) -> dict[str, str]:
    """The environment of a CLI with the plugin: the server's (``home``: the ``HOME`` of an
    earlier session, to resume it), and this test run's Python as the plugin's phasegate
    (``PHASEGATE_PLUGIN_PYTHON``) unless ``extra`` says otherwise."""
    return {
        **os.environ,
        **server.env(home),
        "PHASEGATE_PLUGIN_PYTHON": sys.executable,
        **extra,
    }


def start_claude(
    prompt: str, project: Path, env: dict[str, str], *options: str
) -> subprocess.Popen[str]:
    """``claude -p PROMPT --plugin-dir ROOT`` in ``project``, started (stream-json out)."""
    return subprocess.Popen(
        [str(claude()), "-p", prompt, "--plugin-dir", str(ROOT), "--output-format",
         "stream-json", "--verbose", "--permission-mode", "acceptEdits", *options],
        cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def finish(process: subprocess.Popen[str], timeout: float = 180) -> Session:
    """Wait for a started CLI; what it printed."""
    out, err = process.communicate(timeout=timeout)
    messages = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return Session(process.returncode, messages, err)


def run_claude(prompt: str, project: Path, env: dict[str, str], *options: str) -> Session:
    """:func:`start_claude` and :func:`finish`."""
    return finish(start_claude(prompt, project, env, *options))


def session_state(project: Path, session_id: str) -> dict[str, Any]:
    """The plugin's state of ``session_id`` in ``project``."""
    path = project / ".phasegate" / "plugin" / session_id / "state.json"
    return dict(json.loads(path.read_text()))


def wait_for_requests(server: ScriptedModelServer, count: int, timeout: float = 120) -> None:
    """Return once ``server`` has had ``count`` main requests (fail after ``timeout`` s)."""
    deadline = time.monotonic() + timeout
    while len(server.main_requests()) < count:
        if time.monotonic() > deadline:
            pytest.fail(f"the CLI sent {len(server.main_requests())} of {count} requests")
        time.sleep(0.05)
