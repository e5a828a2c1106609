"""pytest fixtures for testing phased tasks offline with the real Claude Code CLI.

Installed with phasegate and loaded through the ``pytest11`` entry point::

    def test_fix(scripted_model_server, claude_cli_path, tmp_path):
        server = scripted_model_server("tests/scripts/fix.yaml")
        subprocess.run([claude_cli_path, "-p", "..."], env={**os.environ, **server.env()}, ...)

This module is imported by every pytest session of a project that has phasegate installed,
so it imports nothing heavy at module level.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import pytest

from phasegate.agents.claude.cli import bundled_claude_cli as bundled_cli_path

if TYPE_CHECKING:
    from phasegate.agents.scripted.model_server import ScriptedModelServer
    from phasegate.agents.scripted.script import HttpFault, Script

__all__ = ["ScriptedServerFactory", "bundled_cli_path", "claude_cli_path", "scripted_model_server"]


class ScriptedServerFactory(Protocol):
    """The ``scripted_model_server`` fixture: starts a server; the fixture closes it."""

    def __call__(
        self, script: Script | str | Path, *, fail_all: HttpFault | None = None
    ) -> ScriptedModelServer:
        """Start a server that replays ``script`` (a Script, or a YAML/JSON file path)."""
        ...


@pytest.fixture(scope="session")
def claude_cli_path() -> Path:
    """Path of the bundled Claude Code CLI; skips the test when it is not installed."""
    cli = bundled_cli_path()
    if cli is None:
        pytest.skip("the Claude Code CLI bundled with claude-agent-sdk is not installed")
    return cli


@pytest.fixture
def scripted_model_server() -> Iterator[ScriptedServerFactory]:
    """A factory of started :class:`ScriptedModelServer` instances, all closed after the test."""
    from phasegate.agents.scripted.model_server import ScriptedModelServer

    servers: list[ScriptedModelServer] = []

    def start(
        script: Script | str | Path, *, fail_all: HttpFault | None = None
    ) -> ScriptedModelServer:
        server = ScriptedModelServer(script, fail_all=fail_all)
        servers.append(server.start())
        return server

    yield start
    for server in servers:
        server.close()
