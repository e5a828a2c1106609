"""Where the Claude Code CLI is: the one claude-agent-sdk starts when no path is given.

claude-agent-sdk ships the CLI inside its wheel (``claude_agent_sdk/_bundled/claude``, or
``claude.exe`` on Windows) and starts it when :class:`ClaudeAgent` has no ``cli_path``;
without a bundled one it runs ``claude`` from ``PATH``. The package is located without being
imported (importing it costs about 0.6 s), so asking costs no more than a directory lookup.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path

CLI_NAME = "claude.exe" if sys.platform == "win32" else "claude"
"""The file name of the CLI on this platform."""


def bundled_claude_cli() -> Path | None:
    """The CLI bundled with claude-agent-sdk, or None when the package or its CLI is absent."""
    try:
        spec = importlib.util.find_spec("claude_agent_sdk")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for package_dir in spec.submodule_search_locations:
        cli = Path(package_dir) / "_bundled" / CLI_NAME
        if cli.is_file() and os.access(cli, os.X_OK):
            return cli
    return None


def find_claude_cli() -> Path | None:
    """The CLI a Claude Code session starts by default: the bundled one, else ``claude`` on
    ``PATH``; None when there is neither."""
    bundled = bundled_claude_cli()
    if bundled is not None:
        return bundled
    on_path = shutil.which("claude")
    return Path(on_path) if on_path is not None else None
