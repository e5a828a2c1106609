"""The repository as a Claude Code plugin marketplace: what ``claude plugin validate`` says of
it, and how the launcher and the plugin's versions agree."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from phasegate._plugin.checks import STOP_HOOK_SECONDS, Bound
from tests.helpers.plugin import ROOT, claude

pytestmark = pytest.mark.cli


def test_the_repository_is_a_marketplace_and_a_plugin_that_validate_strictly() -> None:
    """``claude plugin validate --strict`` passes on the root (marketplace and plugin)."""
    done = subprocess.run(
        [str(claude()), "plugin", "validate", "--strict", str(ROOT)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    for skill in ("run", "status", "stop", "judge"):
        assert f"skills: phasegate:{skill}" in done.stdout


def test_the_plugin_the_marketplace_and_pyproject_name_one_version() -> None:
    """The plugin's version is phasegate's: the launcher accepts a phasegate of its
    major.minor, so they move together."""
    pyproject = re.search(r'(?m)^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text())
    assert pyproject is not None
    plugin = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())
    market = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    (listed,) = market["plugins"]
    assert plugin["version"] == listed["version"] == pyproject.group(1)
    assert (listed["name"], listed["source"]) == ("phasegate", "./")


def test_the_stop_hooks_timeout_is_the_one_the_gate_bounds_its_checks_by() -> None:
    """Claude Code ends the Stop hook at its ``timeout``; the gate keeps a stop's checks
    within that less a margin (:mod:`phasegate._plugin.checks`), so the two must agree."""
    hooks = json.loads((ROOT / "plugin" / "hooks.json").read_text())["hooks"]
    ((stop,),) = [entry["hooks"] for entry in hooks["Stop"]]
    assert stop["command"].endswith(" hook stop")
    assert stop["timeout"] == STOP_HOOK_SECONDS
    assert 0 < Bound.stop().seconds < STOP_HOOK_SECONDS
