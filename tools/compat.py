"""Run the tests marked ``cli`` against several claude-agent-sdk releases: ``make compat``.

Every claude-agent-sdk wheel bundles its own Claude Code CLI, and the CLI is what phasegate
talks to (hooks, their feedback, the results). So this runs ``pytest -m cli`` once per
claude-agent-sdk release, each in its own virtual environment ``.venv-compat/<version>/``:

- ``oldest``: ``claude_agent_sdk.oldest`` in ``src/phasegate/agents/claude/window.json``,
  the lower bound of the range in ``pyproject.toml``;
- ``locked``: ``claude_agent_sdk.locked`` there, the release ``requirements/dev.lock`` pins;
- ``newest``: the newest release the package index has (``pip index versions``).

Versions that coincide run once. A version listed under ``known_incompatible`` in window.json
(``{"claude_agent_sdk", "claude_code", "reason"}``) is skipped with its reason, loudly; so is
one whose bundled Claude Code is listed there. One release runs every test marked ``cli``:
the newest when it is newer than the lock, else the oldest; the others run the modules in
``SUBSET`` (the locked one always, since ``make test`` runs every test with it). So each CI
run pays for one full cli run beyond ``make test``, which keeps it within its budget;
``--full`` runs every cli test on every version.

Each environment gets the lock, every package checked against its hash, then
``claude-agent-sdk==<version>`` (that package may change, with whatever it needs), then
phasegate itself with ``--no-deps``, all by ``uv pip install`` (the uv the lock pins). A stamp
file records the lock, pyproject.toml and the Python it was built from; an environment whose
stamp matches is reused, any other is built again.

For each version this prints the claude-agent-sdk version, the Claude Code it bundles
(``claude_agent_sdk/_cli_version.py``), passed, failed or skipped, and the wall time of its
tests and of its install; the exit status is 1 when any version failed.

Add a version:

- for good: move ``claude_agent_sdk.oldest`` (with the lower bound in pyproject.toml) or
  ``.locked`` (with ``make lock``) in window.json, and list it under ``tested`` there;
- once: ``.venv/bin/python tools/compat.py 0.2.188`` runs the versions named instead of the
  three above (``--full`` for every cli test); ``make compat COMPAT_ARGS=0.2.188`` the same.

``--list`` prints the versions that would run and why, without installing anything.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
WINDOW = ROOT / "src" / "phasegate" / "agents" / "claude" / "window.json"
LOCK = ROOT / "requirements" / "dev.lock"
PYPROJECT = ROOT / "pyproject.toml"
VENVS = ROOT / ".venv-compat"
PACKAGE = "claude-agent-sdk"

# What a release runs unless it gets every cli test: the modules that exercise what phasegate
# relies on in the CLI (the Stop hook and how its feedback reaches the model, the block cap of
# a pipeline or loop in one session, markers, result fields, per-response usage from partial
# messages, the command line), about 180 s of
# test time; every test marked cli is about 1400 s (23 min on one core, 12 on two).
SUBSET = [
    "tests/agents/test_claude_agent.py",
    "tests/_plugin/test_plugin_package.py",
    "tests/_plugin/test_plugin_run.py",
    "tests/_plugin/test_plugin_failures.py",
    "tests/_plugin/test_plugin_interactive.py",
    "tests/_plugin/test_plugin_subagents.py",
    "tests/_plugin/test_plugin_completion_tools.py",
    "tests/_plugin/test_plugin_checks_cli.py",
    "tests/agents/test_claude_plugins.py",
    "tests/_plugin/test_plugin_pipelines.py",
    "tests/agents/test_claude_tool_policy.py",
    "tests/agents/test_claude_sandbox.py",
    "tests/agents/test_sandbox_hostile_network.py",
    "tests/agents/test_claude_fork.py",
    "tests/agents/test_claude_session_close.py",
    "tests/agents/test_claude_subagents.py",
    "tests/tasks/test_gate_overhead.py",
    "tests/recording/test_recorded_runs.py",
    "tests/agents/scripted/test_model_server.py",
    "tests/pipelines/test_pipeline_runner.py",
    "tests/phases/test_markers.py",
    "tests/_cli/test_cli.py",
    "tests/_cli/test_usage_adds_up.py",
    "tests/examples/test_two_phase_example.py",
    "tests/planning/test_ask_user_question_cli.py",
    "tests/examples/test_pagent_example.py",
    "tests/examples/test_ralph_loop_example.py",
]

PYTEST_ARGS = ["-m", "cli", "-n", "2", "--dist", "loadfile", "-q", "-p", "no:cacheprovider"]


@dataclass
class Target:
    """One claude-agent-sdk release to test, and why (``oldest``, ``locked``, ``newest``)."""

    version: str
    roles: list[str] = field(default_factory=list)
    full: bool = False


@dataclass
class Outcome:
    """What became of one target."""

    target: Target
    status: str  # "passed", "failed" or "skipped"
    claude_code: str = "?"
    install_seconds: float = 0.0
    test_seconds: float = 0.0
    note: str = ""


def say(message: str) -> None:
    """Print a line at once (pytest's own output is interleaved with ours)."""
    print(message, flush=True)


def load_window() -> dict[str, Any]:
    """window.json, the tested window of claude-agent-sdk and Claude Code releases."""
    data = json.loads(WINDOW.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise SystemExit(f"{WINDOW}: not a JSON object")
    return data


def version_key(version: str) -> tuple[int, ...]:
    """Sort key for plain release numbers such as ``0.2.189``."""
    return tuple(int(part) for part in re.findall(r"\d+", version))


def newest_release() -> str:
    """The newest claude-agent-sdk release the configured package index has."""
    result = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", PACKAGE, "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        check=False,
    )
    newest = newest_in(result.stdout) if result.returncode == 0 else None
    if newest is None:
        raise SystemExit(
            f"compat: could not ask the package index for {PACKAGE}'s newest release:\n"
            + result.stdout
            + result.stderr
        )
    return newest


def newest_in(listing: str) -> str | None:
    """The version in ``pip index versions``' first line, ``claude-agent-sdk (0.2.189)``."""
    match = re.search(rf"^{re.escape(PACKAGE)} \(([^)]+)\)$", listing, re.MULTILINE)
    return match.group(1) if match else None


def targets_from_window(window: dict[str, Any], newest: str) -> list[Target]:
    """oldest, locked and newest, those that coincide merged into one target."""
    sdk = window["claude_agent_sdk"]
    merged: dict[str, Target] = {}
    for role, version in (("oldest", sdk["oldest"]), ("locked", sdk["locked"]), ("newest", newest)):
        merged.setdefault(version, Target(version)).roles.append(role)
    for target in merged.values():
        # The newest release gets every cli test, unless it is the locked one: `make test` runs
        # every test with that, in .venv.
        target.full = "newest" in target.roles and "locked" not in target.roles
    if not any(target.full for target in merged.values()):
        # No release newer than the lock: the time goes to every cli test on the oldest.
        for target in merged.values():
            target.full = "oldest" in target.roles and "locked" not in target.roles
    return sorted(merged.values(), key=lambda t: version_key(t.version))


def incompatibility(
    window: dict[str, Any], version: str, claude_code: str | None = None
) -> str | None:
    """The reason window.json gives for not running this release, if it lists it."""
    for entry in window.get("known_incompatible", []):
        if entry.get("claude_agent_sdk") == version or (
            claude_code is not None and entry.get("claude_code") == claude_code
        ):
            sdk, cli = entry.get("claude_agent_sdk", "?"), entry.get("claude_code", "?")
            reason = entry.get("reason", "no reason given")
            return f"{reason} (claude-agent-sdk {sdk}, Claude Code {cli})"
    return None


def bin_dir(venv: Path) -> Path:
    return venv / ("Scripts" if os.name == "nt" else "bin")


def stamp_for(version: str) -> str:
    """What an environment for this release is built from; a change means build it again."""
    digest = hashlib.sha256()
    for path in (LOCK, PYPROJECT):
        digest.update(path.read_bytes())
    base = getattr(sys, "_base_executable", sys.executable)
    return json.dumps(
        {"claude_agent_sdk": version, "inputs": digest.hexdigest(), "python": base}, sort_keys=True
    )


def run(command: list[str | Path], log: Path) -> None:
    """Run an install step, its output to the log; on failure show the log and stop."""
    with log.open("a", encoding="utf-8") as out:
        out.write(f"$ {' '.join(map(str, command))}\n")
        out.flush()
        result = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, check=False)
    if result.returncode != 0:
        say(log.read_text(encoding="utf-8")[-6000:])
        raise RuntimeError(f"`{' '.join(map(str, command))}` exited {result.returncode}")


def prepare(version: str) -> tuple[Path, bool]:
    """The environment for this release, built unless one with a matching stamp exists."""
    venv = VENVS / version
    stamp = venv / ".installed"
    wanted = stamp_for(version)
    if stamp.is_file() and stamp.read_text(encoding="utf-8") == wanted:
        return venv, True
    shutil.rmtree(venv, ignore_errors=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    log = VENVS / f"{version}.install.log"
    log.unlink(missing_ok=True)
    # uv (the one the lock pins, beside this Python) installs like pip here, hashes checked the
    # same way, in seconds from its cache where pip takes one to two minutes per environment.
    install: list[str | Path] = [sys.executable, "-m", "uv", "pip", "install", "--quiet"]
    install += ["--python", bin_dir(venv) / "python"]
    run([sys.executable, "-m", "venv", venv], log)
    run([*install, "--require-hashes", "-r", LOCK], log)
    run([*install, f"{PACKAGE}=={version}"], log)
    run([*install, "--no-deps", "--no-build-isolation", "-e", ROOT], log)
    stamp.write_text(wanted, encoding="utf-8")
    return venv, False


def installed_versions(venv: Path) -> tuple[str, str]:
    """claude-agent-sdk's version in the environment and the Claude Code it bundles."""
    code = (
        "import importlib.metadata as m\n"
        "from claude_agent_sdk._cli_version import __cli_version__\n"
        f"print(m.version({PACKAGE!r}), __cli_version__)\n"
    )
    result = subprocess.run(
        [bin_dir(venv) / "python", "-c", code], capture_output=True, text=True, check=True
    )
    sdk, cli = result.stdout.split()
    return sdk, cli


def minutes(seconds: float) -> str:
    return f"{int(seconds // 60)}m{seconds % 60:04.1f}s"


def check(window: dict[str, Any], target: Target) -> Outcome:
    """Build (or reuse) the target's environment and run its cli tests there."""
    label = f"claude-agent-sdk {target.version} ({', '.join(target.roles) or 'named'})"
    reason = incompatibility(window, target.version)
    if reason is not None:
        return Outcome(target, "skipped", note=reason)
    say(f"\n=== {label}: preparing .venv-compat/{target.version}")
    started = time.monotonic()
    try:
        venv, reused = prepare(target.version)
        sdk, cli = installed_versions(venv)
    except (RuntimeError, subprocess.CalledProcessError) as error:
        return Outcome(target, "failed", note=f"install failed: {error}")
    install_seconds = time.monotonic() - started
    if sdk != target.version:
        note = f"installed claude-agent-sdk {sdk}, not {target.version}"
        return Outcome(target, "failed", cli, install_seconds, note=note)
    reason = incompatibility(window, target.version, cli)
    if reason is not None:
        return Outcome(target, "skipped", cli, install_seconds, note=reason)
    how = "reused" if reused else f"built in {minutes(install_seconds)}"
    which = "every test marked cli" if target.full else f"{len(SUBSET)} modules' tests marked cli"
    say(f"=== {label}, Claude Code {cli}: environment {how}; running {which}")
    started = time.monotonic()
    command: list[str | Path] = [bin_dir(venv) / "python", "-m", "pytest", *PYTEST_ARGS]
    if not target.full:
        command += SUBSET
    say("$ " + " ".join(str(part) for part in command).replace(f"{ROOT}/", ""))
    result = subprocess.run(command, cwd=ROOT, check=False)
    test_seconds = time.monotonic() - started
    status = "passed" if result.returncode == 0 else "failed"
    note = "" if status == "passed" else f"pytest exited {result.returncode}"
    return Outcome(target, status, cli, install_seconds, test_seconds, note)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("versions", nargs="*", help="run these releases instead (once-off)")
    parser.add_argument("--full", action="store_true", help="every cli test on every version")
    parser.add_argument("--list", action="store_true", help="print the versions, install none")
    args = parser.parse_args(argv)

    window = load_window()
    if args.versions:
        targets = [Target(v) for v in dict.fromkeys(args.versions)]
    else:
        targets = targets_from_window(window, newest_release())
    for target in targets:
        target.full = target.full or args.full

    say("compat: claude-agent-sdk releases to test (tests marked cli, pytest -n 2):")
    for target in targets:
        roles = " = ".join(target.roles) or "named on the command line"
        merged = " (the same release, run once)" if len(target.roles) > 1 else ""
        tests = "all" if target.full else "subset"
        say(f"  {target.version:<10} {roles}{merged}; tests: {tests}")
    if args.list:
        return 0

    outcomes = [check(window, target) for target in targets]

    say("\ncompat: results")
    say(
        f"  {'claude-agent-sdk':<17} {'Claude Code':<12} {'result':<8} {'tests':>10} "
        f"{'install':>10}  roles"
    )
    for o in outcomes:
        roles = ", ".join(o.target.roles) or "named"
        tests = minutes(o.test_seconds) if o.test_seconds else "-"
        say(
            f"  {o.target.version:<17} {o.claude_code:<12} {o.status:<8} {tests:>10} "
            f"{minutes(o.install_seconds):>10}  {roles}"
        )
    for o in outcomes:
        if o.status == "skipped":
            say(
                f"\n!!! SKIPPED claude-agent-sdk {o.target.version}: listed as known incompatible "
                f"in window.json: {o.note}"
            )
        elif o.status == "failed":
            say(f"\n!!! FAILED claude-agent-sdk {o.target.version}: {o.note}")
    return 1 if any(o.status == "failed" for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
