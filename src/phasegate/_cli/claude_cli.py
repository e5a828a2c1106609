"""``phasegate claude-cli``: the path of the Claude Code CLI phasegate runs.

The CLI ships inside the claude-agent-sdk wheel, so a plain ``claude`` is often not on
``PATH``; ``"$(phasegate claude-cli)" -p ...`` runs the same CLI ``phasegate run`` would.
"""

from __future__ import annotations

from pathlib import Path

from phasegate._cli.output import print_result
from phasegate.errors import UsageError


def claude_cli() -> None:
    """Print the path of the Claude Code CLI phasegate runs (bundled with claude-agent-sdk).

    Use it to run Claude Code yourself, e.g. "$(phasegate claude-cli)" -p "..." --output-format
    stream-json --verbose > run.jsonl
    """
    from phasegate.agents.claude.cli import find_claude_cli

    cli = find_claude_cli()
    if cli is None:
        raise no_cli_found()
    print_result(str(cli))


def no_cli_found(cli_path: Path | None = None) -> UsageError:
    """The error of a command that found no Claude Code CLI (exit code 2): at ``cli_path``
    when one was given, else neither bundled nor on ``PATH``."""
    if cli_path is not None:
        return UsageError(f"no Claude Code CLI found at {cli_path}: give the path of one")
    return UsageError(
        "no Claude Code CLI found: claude-agent-sdk's bundled CLI is missing and `claude` "
        "is not on PATH; reinstall phasegate (pip install --force-reinstall "
        "claude-agent-sdk) or install Claude Code"
    )
