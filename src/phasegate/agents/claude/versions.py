"""Which Claude Code a run uses, and which claude-agent-sdk: the one place that finds out.

Without a ``cli_path`` a session starts the CLI bundled with claude-agent-sdk, whose version
the package pins in ``claude_agent_sdk/_cli_version.py``: that file is read as text, so
asking costs no import of the package (about 0.6 s). Any other CLI (a ``cli_path``, or
``claude`` on ``PATH`` when nothing is bundled) is asked with ``<cli> --version``, once per
file and process, within :data:`VERSION_TIMEOUT`; a CLI that fails to answer has no known
version (None), which is never an error here: running it will say what is wrong.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import importlib.util
import os
import re
import signal
import subprocess
from pathlib import Path

from phasegate.agents.claude.cli import bundled_claude_cli, find_claude_cli

VERSION_TIMEOUT = 5.0
"""Seconds ``<cli> --version`` may take (the bundled CLI answers in a few milliseconds; a
cold start of its 400 MB binary on a busy machine takes longer)."""

_VERSION = re.compile(r"\d+(?:\.\d+)+")
"""A dotted version number, as in ``2.1.332 (Claude Code)``."""
_PINNED = re.compile(r"""__cli_version__\s*=\s*["']([^"']+)["']""")


def parse_version(text: str | None) -> str | None:
    """The first dotted version number in ``text`` (``2.1.332`` of ``2.1.332 (Claude
    Code)``), or None."""
    found = _VERSION.search(text or "")
    return found.group(0) if found else None


@functools.cache
def claude_agent_sdk_version() -> str | None:
    """The installed claude-agent-sdk's version, from its package metadata (None without it;
    read once)."""
    try:
        return importlib.metadata.version("claude-agent-sdk")
    except importlib.metadata.PackageNotFoundError:
        return None


def bundled_cli_version() -> str | None:
    """The version of the CLI claude-agent-sdk bundles, as the package pins it in
    ``_cli_version.py`` (read as text, not imported); None when there is no such file."""
    try:
        spec = importlib.util.find_spec("claude_agent_sdk")
    except (ImportError, ValueError):
        return None
    for package_dir in (spec.submodule_search_locations or []) if spec else []:
        try:
            text = (Path(package_dir) / "_cli_version.py").read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        pinned = _PINNED.search(text)
        if pinned:
            return pinned.group(1)
    return None


def version_output(cli: Path) -> str | None:
    """What ``<cli> --version`` prints (its first line), or None when it cannot be run, fails,
    prints nothing or outlives :data:`VERSION_TIMEOUT`. Asked once per file: again only
    when the file changed (its size or modification time)."""
    try:
        stat = cli.stat()
    except OSError:
        return None
    return _version_output(str(cli), stat.st_mtime_ns, stat.st_size)


@functools.cache
def _version_output(cli: str, mtime_ns: int, size: int) -> str | None:
    del mtime_ns, size  # part of the cache key only
    try:
        process = subprocess.Popen(
            [cli, "--version"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            errors="replace",
            start_new_session=_POSIX,  # a group of its own, ended whole on a timeout
        )
    except (OSError, ValueError):
        return None
    with process:
        try:
            out, _ = process.communicate(timeout=VERSION_TIMEOUT)
        except subprocess.TimeoutExpired:
            _end(process)
            return None
    lines = out.strip().splitlines()
    if process.returncode != 0 or not lines:
        return None
    return lines[0].strip()


_POSIX = os.name == "posix"


def _end(process: subprocess.Popen[str]) -> None:
    """Kill a CLI that outlived its time, with whatever it started (they hold its output)."""
    if _POSIX:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    else:
        process.kill()
    process.communicate()


def claude_code_version(cli_path: str | Path | None = None) -> str | None:
    """The version of the Claude Code CLI a session with ``cli_path`` runs (``2.1.332``).

    No path: the bundled CLI's pinned version, else (nothing bundled) what ``claude`` on
    ``PATH`` says. A path: what that CLI says. None when it cannot be told.
    """
    if cli_path is None:
        if bundled_claude_cli() is not None:
            pinned = bundled_cli_version()
            if pinned is not None:
                return pinned
        cli = find_claude_cli()
        return parse_version(version_output(cli)) if cli is not None else None
    return parse_version(version_output(Path(cli_path)))
