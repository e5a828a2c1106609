"""The lock, the tested window and ``make compat``'s driver (tools/compat.py) agree.

What needs virtual environments (building them, running pytest in them) is ``make compat``
itself; these check the data it reads and the choices it makes from them.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements" / "dev.lock"
WINDOW = ROOT / "src" / "phasegate" / "agents" / "claude" / "window.json"


@pytest.fixture(scope="module")
def compat() -> ModuleType:
    """tools/compat.py, loaded from its file (tools/ is not a package)."""
    spec = importlib.util.spec_from_file_location(
        "phasegate_compat_tool", ROOT / "tools" / "compat.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


def _pins() -> dict[str, str]:
    """The lock's ``name==version`` lines, names normalised."""
    text = LOCK.read_text(encoding="utf-8")
    return {
        re.sub(r"[-_.]+", "-", name).lower(): version
        for name, version in re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", text, re.M)
    }


def _window() -> dict[str, Any]:
    data = json.loads(WINDOW.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _window_with(oldest: str, locked: str, incompatible: list[dict[str, str]]) -> dict[str, Any]:
    return {
        "claude_agent_sdk": {"oldest": oldest, "locked": locked},
        "known_incompatible": incompatible,
    }


def test_the_lock_pins_every_requirement_of_the_project_and_its_dev_extra() -> None:
    """A requirement added to pyproject.toml without `make lock` fails here, not on install."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pins = _pins()
    wanted = [
        Requirement(r) for r in project["dependencies"] + project["optional-dependencies"]["dev"]
    ]
    unmet = [
        str(r)
        for r in wanted
        if re.sub(r"[-_.]+", "-", r.name).lower() not in pins
        or not r.specifier.contains(pins[re.sub(r"[-_.]+", "-", r.name).lower()], prereleases=True)
    ]
    assert unmet == []
    entries = re.split(r"^(?=[A-Za-z0-9])", LOCK.read_text(encoding="utf-8"), flags=re.M)[1:]
    # A package may have an entry per Python version range (a marker each): every entry is
    # still one pin, and the names are the pins'.
    pinned = [re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)==\S+", entry) for entry in entries]
    assert None not in pinned
    assert {re.sub(r"[-_.]+", "-", m[1]).lower() for m in pinned if m} == set(pins)
    assert [entry.split()[0] for entry in entries if "--hash=sha256:" not in entry] == []


def test_the_window_names_the_locked_release_and_the_lower_bound() -> None:
    """window.json's locked release is the lock's; its oldest is pyproject.toml's lower bound."""
    sdk = _window()["claude_agent_sdk"]
    assert _pins()["claude-agent-sdk"] == sdk["locked"]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    (requirement,) = [
        Requirement(r) for r in project["dependencies"] if r.startswith("claude-agent-sdk")
    ]
    assert f">={sdk['oldest']}" in [str(s) for s in requirement.specifier]


def test_releases_that_coincide_run_once(compat: ModuleType) -> None:
    """Locked and newest the same release: one target, the subset (make test ran it all);
    the oldest then runs every cli test."""
    targets = compat.targets_from_window(_window_with("0.2.187", "0.2.189", []), "0.2.189")
    assert [(t.version, t.roles, t.full) for t in targets] == [
        ("0.2.187", ["oldest"], True),
        ("0.2.189", ["locked", "newest"], False),
    ]


def test_a_newer_release_than_the_lock_runs_every_cli_test(compat: ModuleType) -> None:
    """Three releases, in version order (0.2.190 after 0.2.19); only the newest runs them all."""
    targets = compat.targets_from_window(_window_with("0.2.19", "0.2.189", []), "0.2.190")
    assert [(t.version, t.roles, t.full) for t in targets] == [
        ("0.2.19", ["oldest"], False),
        ("0.2.189", ["locked"], False),
        ("0.2.190", ["newest"], True),
    ]


def test_a_known_incompatible_release_is_named_with_its_reason(compat: ModuleType) -> None:
    """By claude-agent-sdk version, or by the Claude Code it bundles (known after install)."""
    entry = {"claude_agent_sdk": "0.2.190", "claude_code": "2.1.333", "reason": "hooks renamed"}
    window = _window_with("0.2.187", "0.2.189", [entry])
    expected = "hooks renamed (claude-agent-sdk 0.2.190, Claude Code 2.1.333)"
    assert compat.incompatibility(window, "0.2.190") == expected
    assert compat.incompatibility(window, "0.2.191", "2.1.333") == expected
    assert compat.incompatibility(window, "0.2.189", "2.1.332") is None


def test_a_known_incompatible_release_is_skipped_not_failed(
    compat: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nothing is installed for it; the summary says SKIPPED with the reason; exit 0."""
    entry = {"claude_agent_sdk": "0.0.1", "claude_code": "1.0.0", "reason": "too old to care"}
    window = _window_with("0.0.1", "0.0.1", [entry])
    outcome = compat.check(window, compat.Target("0.0.1", ["oldest"]))
    assert (outcome.status, outcome.note) == (
        "skipped",
        "too old to care (claude-agent-sdk 0.0.1, Claude Code 1.0.0)",
    )
    assert not (compat.VENVS / "0.0.1").exists()
    assert capsys.readouterr().out == ""


def test_the_newest_release_is_read_from_pips_listing(compat: ModuleType) -> None:
    listing = "claude-agent-sdk (0.2.189)\nAvailable versions: 0.2.189, 0.2.188\n"
    assert compat.newest_in(listing) == "0.2.189"
    assert compat.newest_in("ERROR: No matching distribution found\n") is None


def test_the_subset_names_modules_of_cli_tests(compat: ModuleType) -> None:
    """Each module in the subset holds tests marked cli (as pytest collects them)."""
    flags = ["--collect-only", "-q", "-m", "cli", "-p", "no:cacheprovider", "-p", "no:xdist"]
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *flags, *compat.SUBSET],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    collected = {line.split("::")[0] for line in result.stdout.splitlines() if "::" in line}
    assert collected == set(compat.SUBSET)
