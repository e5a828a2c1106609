"""The tested window of Claude Code releases: inside, older, newer, known incompatible, and
the one warning a process gets for a CLI outside it."""

from __future__ import annotations

import json
import sys
import warnings
from typing import Any

import pytest

from phasegate.errors import ClaudeCodeVersionWarning, PhasegateWarning
from phasegate.agents.claude import window as window_module
from phasegate.agents.claude.window import (
    WINDOW_FILE,
    ReleaseWindow,
    release_window,
    version_key,
    warn_outside_window,
)

WINDOW_DATA: dict[str, Any] = {
    "_about": "a window for these tests",
    "claude_agent_sdk": {"oldest": "0.2.187", "locked": "0.2.189"},
    "tested": [
        {"claude_agent_sdk": "0.2.187", "claude_code": "2.1.330", "checked": "2026-11-25"},
        {"claude_agent_sdk": "0.2.189", "claude_code": "2.1.332", "checked": "2026-11-25"},
    ],
    "known_incompatible": [
        {"claude_agent_sdk": "0.2.188", "claude_code": "2.1.331", "reason": "hooks never fire"},
    ],
    "python": ["3.11", "3.12", "3.13"],
}
WINDOW = ReleaseWindow.model_validate(WINDOW_DATA)


@pytest.fixture
def fresh_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """No version warned about yet, as in a process that just started."""
    monkeypatch.setattr(window_module, "_warned", set())


@pytest.mark.parametrize("version", ["2.1.330", "2.1.332", "2.1.330.0"])
def test_the_oldest_and_newest_tested_versions_are_inside_the_window(version: str) -> None:
    """Both ends count as inside (2.1.330.0 is 2.1.330)."""
    check = WINDOW.check(version, "0.2.189")

    assert check.status == "inside" and check.inside and not check.outside
    assert "inside the tested window" in check.message
    assert "2.1.330 to 2.1.332" in check.message


def test_a_version_older_than_every_tested_one_says_so_and_what_to_do() -> None:
    """The message names the version, the window and the tested release to pin."""
    check = WINDOW.check("2.1.300", "0.2.180")

    assert check.status == "older" and check.outside
    assert check.message.startswith("Claude Code 2.1.300 is older than the releases")
    assert "Claude Code 2.1.330 to 2.1.332" in check.message
    assert "claude-agent-sdk 0.2.187 to 0.2.189" in check.message
    assert "pip install 'claude-agent-sdk==0.2.189'" in check.message


def test_a_version_newer_than_every_tested_one_says_so_and_what_to_do() -> None:
    """Newer: pin a tested release, or check the runs and report what breaks."""
    check = WINDOW.check("2.2.0", "0.2.195")

    assert check.status == "newer" and check.outside
    assert check.message.startswith("Claude Code 2.2.0 is newer than the releases")
    assert "pin claude-agent-sdk to a tested release" in check.message
    assert "report what breaks" in check.message


def test_versions_compare_number_by_number_not_as_text() -> None:
    """2.1.99 is older than 2.1.330, although "2.1.99" > "2.1.330" as text; 10.0 is newer."""
    assert WINDOW.check("2.1.99").status == "older"
    assert WINDOW.check("10.0.0").status == "newer"
    assert version_key("2.1.332-beta.1") == (2, 1, 332)


def test_a_known_incompatible_pair_is_outside_with_its_reason() -> None:
    """Inside the range, but listed: outside, and the message carries the recorded reason."""
    check = WINDOW.check("2.1.331", "0.2.188")

    assert check.status == "incompatible" and check.outside
    assert check.reason == "hooks never fire"
    assert "known not to work with phasegate: hooks never fire" in check.message
    assert "claude-agent-sdk 0.2.188" in check.message


def test_an_incompatibility_names_its_pair_an_unknown_or_unlisted_sdk_matches_any() -> None:
    """Listed with 0.2.188: the same CLI with another SDK is inside; with an unknown SDK, or
    in an entry without an SDK, it is not."""
    any_sdk = ReleaseWindow.model_validate(
        {
            **WINDOW_DATA,
            "known_incompatible": [{"claude_code": "2.1.331", "reason": "broken stream"}],
        }
    )

    assert WINDOW.check("2.1.331", "0.2.190").status == "inside"
    assert WINDOW.check("2.1.331", None).status == "incompatible"
    assert any_sdk.check("2.1.331", "0.2.190").status == "incompatible"


@pytest.mark.parametrize("version", [None, "unknown"])
def test_an_unknown_version_cannot_be_checked_and_is_not_outside(version: str | None) -> None:
    """A CLI that would not say its version is neither inside nor worth a warning."""
    check = WINDOW.check(version)

    assert check.status == "unknown" and not check.inside and not check.outside
    assert "cannot be checked" in check.message


def test_a_window_entry_that_is_not_a_version_is_refused() -> None:
    """The file is data phasegate ships: a typo in it fails loudly, naming the field."""
    broken = {**WINDOW_DATA, "tested": [{"claude_agent_sdk": "0.2.189", "claude_code": "latest"}]}

    with pytest.raises(ValueError, match="'latest' is not a version number"):
        ReleaseWindow.model_validate(broken)


def test_the_shipped_window_reads_and_its_locked_release_is_a_tested_pair() -> None:
    """window.json in the package: valid, ordered ends, the locked SDK among the tested pairs,
    and this Python among its Python versions."""
    shipped = release_window()

    assert json.loads(WINDOW_FILE.read_text())["tested"]
    oldest, newest = (
        version_key(shipped.oldest_claude_code),
        version_key(shipped.newest_claude_code),
    )
    assert oldest is not None and newest is not None and oldest <= newest
    locked = shipped.claude_agent_sdk.locked
    assert locked in {pair.claude_agent_sdk for pair in shipped.tested}
    assert f"{sys.version_info.major}.{sys.version_info.minor}" in shipped.python
    assert shipped.check(shipped.newest_claude_code, locked).inside


@pytest.mark.usefixtures("fresh_process")
def test_a_cli_outside_the_window_is_warned_about_once_per_process() -> None:
    """Three runs with 2.2.0 and one with 2.1.300: one warning for each version, none for a
    version inside; the category is phasegate's own."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # Python's own once-per-place rule is not the test
        for _ in range(3):
            warn_outside_window("2.2.0", "0.2.195", window=WINDOW)
        warn_outside_window("2.1.332", "0.2.189", window=WINDOW)
        warn_outside_window("2.1.300", window=WINDOW)

    assert [w.category for w in caught] == [ClaudeCodeVersionWarning] * 2
    assert issubclass(ClaudeCodeVersionWarning, PhasegateWarning)
    assert "Claude Code 2.2.0 is newer" in str(caught[0].message)
    assert "Claude Code 2.1.300 is older" in str(caught[1].message)


@pytest.mark.usefixtures("fresh_process")
def test_this_suites_warning_filters_keep_the_version_warning_a_warning() -> None:
    """pyproject's filterwarnings turns warnings into errors, except this one: the
    compatibility suite runs CLIs newer than the window on purpose."""
    with warnings.catch_warnings(record=True) as caught:  # the suite's filters stay in force
        check = warn_outside_window("9.0.0", window=WINDOW)

    assert check.status == "newer"
    assert [w.category for w in caught] == [ClaudeCodeVersionWarning]
