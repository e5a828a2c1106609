"""``phasegate doctor`` and ``phasegate claude-cli``: what runs would use here.

``doctor`` says whether it is what phasegate is tested with.

It reports the Claude Code CLI (its path and what ``--version`` prints), claude-agent-sdk's
version, where that Claude Code stands against the tested window, the Python version, the
extras installed and the kinds of credentials found, by name only: no credential value is
ever read into the report. Nothing heavy is imported: packages are found by their metadata.

``--json`` prints one object whose keys are stable (fields are only ever added):
``schema_version``, ``phasegate``, ``claude_code`` (``path``, ``source``, ``version_output``,
``version``), ``claude_agent_sdk``, ``window`` (``status``, ``inside``, ``message``,
``claude_code`` and ``claude_agent_sdk`` ranges, ``python``), ``python`` (``version``,
``executable``, ``tested``), ``extras`` (extra → installed), ``credentials``
(``variables``, ``login_file``) and ``sandbox`` (``can_run``, ``problem``; on Linux ``bwrap``,
``socat``, ``user_namespaces``, ``seccomp``). "Checking an installation" in docs/cli.md explains
each.

Exit codes: 0 when a CLI was found, whatever the window says (a CLI outside it is a warning,
never an error); 2 when none was found, as ``phasegate claude-cli`` and ``phasegate run``
(nothing can run until one is installed or ``--cli-path`` names one). The report is printed
either way.

``claude-cli`` prints the path of the Claude Code CLI phasegate runs. The CLI ships inside
the claude-agent-sdk wheel, so a plain ``claude`` is often not on ``PATH``;
``"$(phasegate claude-cli)" -p ...`` runs the same CLI ``phasegate run`` would.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import sys
from pathlib import Path
from typing import Any

from phasegate._cli.options import CliPath, JsonOutput
from phasegate._cli.output import print_result
from phasegate.errors import UsageError

SCHEMA_VERSION = 1
"""The version of ``doctor --json``'s shape; it changes when a field changes meaning."""

EXTRAS: dict[str, tuple[str, ...]] = {
    "serve": ("fastapi", "uvicorn", "prometheus-client"),
    "client": ("httpx",),
    "ray": ("ray",),
    "otel": ("opentelemetry-api",),
}
"""phasegate's pip extras and the distributions each needs (as in pyproject.toml)."""


def doctor(cli_path: CliPath = None, json_output: JsonOutput = False) -> None:
    """Show what runs would use: the Claude Code CLI and its version, claude-agent-sdk,
    whether they are inside the tested window, Python, the extras and the credentials found.

    Exit code 0 when a Claude Code CLI was found (outside the tested window too: that is a
    warning); 2 when none was found. Credentials are named, never shown.
    """
    found = diagnose(cli_path)
    print_result(json.dumps(found, indent=2) if json_output else format_diagnosis(found))
    if found["claude_code"]["path"] is None:
        raise no_cli_found(cli_path)


def diagnose(cli_path: Path | None = None) -> dict[str, Any]:
    """Everything ``doctor`` reports, as its JSON object."""
    from phasegate.agents.claude.cli import (
        bundled_claude_cli,
        claude_agent_sdk_version,
        claude_code_version,
        find_claude_cli,
        version_output,
    )
    from phasegate.agents.claude.credentials import credential_sources
    from phasegate.agents.claude.sandbox import sandbox_facts
    from phasegate.agents.claude.window import release_window

    if cli_path is not None:
        cli = cli_path if cli_path.is_file() else None
        source = "cli_path" if cli is not None else None
    else:
        cli = find_claude_cli()
        source = None if cli is None else "bundled" if cli == bundled_claude_cli() else "path"
    version = claude_code_version(cli_path) if cli is not None else None
    sdk = claude_agent_sdk_version()
    window = release_window()
    check = window.check(version, sdk)
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    credentials = credential_sources(os.environ)
    return {
        "schema_version": SCHEMA_VERSION,
        "phasegate": _distribution_version("phasegate"),
        "claude_code": {
            "path": str(cli) if cli is not None else None,
            "source": source,
            "version_output": version_output(cli) if cli is not None else None,
            "version": version,
        },
        "claude_agent_sdk": sdk,
        "window": {
            "status": check.status,
            "inside": check.inside,
            "message": check.message,
            "claude_code": {
                "oldest": window.oldest_claude_code,
                "newest": window.newest_claude_code,
            },
            "claude_agent_sdk": {
                "oldest": window.claude_agent_sdk.oldest,
                "locked": window.claude_agent_sdk.locked,
            },
            "python": list(window.python),
        },
        "python": {
            "version": platform.python_version(),
            "executable": sys.executable,
            "tested": python in window.python,
        },
        "extras": {
            extra: all(_distribution_version(name) is not None for name in names)
            for extra, names in EXTRAS.items()
        },
        "credentials": {
            "variables": list(credentials.variables),
            "login_file": str(credentials.login_file) if credentials.login_file else None,
        },
        "sandbox": sandbox_facts(),
    }


def _distribution_version(name: str) -> str | None:
    """An installed distribution's version, from its metadata (None when not installed)."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


NO_CREDENTIALS = "runs need ANTHROPIC_API_KEY, a Claude Code login or ANTHROPIC_BASE_URL"

_SOURCES = {
    "bundled": "bundled with claude-agent-sdk",
    "path": "claude on PATH",
    "cli_path": "given with --cli-path",
}


def format_diagnosis(found: dict[str, Any]) -> str:
    """``doctor``'s report as a short table, a label and a value a line."""
    cli = found["claude_code"]
    window = found["window"]
    python = found["python"]
    if cli["path"] is None:
        where, answer = "not found", "-"
    else:
        where = f"{cli['path']} ({_SOURCES[cli['source']]})"
        answer = cli["version_output"] or "(no answer: it failed or took too long)"
    if window["status"] == "inside":
        tested = (
            f"inside (Claude Code {window['claude_code']['oldest']} to "
            f"{window['claude_code']['newest']})"
        )
    else:
        tested = f"{window['status']}: {window['message']}"
    tested_python = ", ".join(window["python"])
    extras = ", ".join(
        f"{extra} {'yes' if installed else 'no'}" for extra, installed in found["extras"].items()
    )
    credentials = found["credentials"]
    kinds = [*credentials["variables"]]
    if credentials["login_file"]:
        kinds.append(f"Claude Code login ({credentials['login_file']})")
    rows = [
        ("phasegate", found["phasegate"] or "unknown"),
        ("Claude Code CLI", where),
        ("claude --version", answer),
        ("claude-agent-sdk", found["claude_agent_sdk"] or "not installed"),
        ("tested window", tested),
        ("Python", f"{python['version']} (tested: {tested_python})"),
        ("extras", extras),
        ("credentials", ", ".join(kinds) or f"none found ({NO_CREDENTIALS})"),
        *_sandbox_rows(found["sandbox"]),
    ]
    width = max(len(label) for label, _ in rows)
    return "\n".join(f"{label.ljust(width)}  {value}" for label, value in rows)


def _sandbox_rows(sandbox: dict[str, Any]) -> list[tuple[str, str]]:
    """The sandbox's lines: whether it can run, and on Linux what it needs."""
    verdict = "can run" if sandbox["can_run"] else f"cannot run: {sandbox['problem']}"
    rows = [("sandbox", verdict)]
    for name, label in (("bwrap", "bubblewrap"), ("socat", "socat")):
        if name in sandbox:
            program = sandbox[name]
            rows.append(
                (label, f"{program['path']} ({program['version'] or 'version unknown'})"
                 if program else "missing")
            )  # fmt: skip
    if "user_namespaces" in sandbox:
        rows.append(("user namespaces", sandbox["user_namespaces"] or "unknown (no bwrap)"))
        seccomp = "available" if sandbox["seccomp"] else "not offered by the kernel"
        rows.append(("seccomp", f"{seccomp} (Claude Code brings its own filter)"))
    return rows


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
