"""The window of Claude Code releases phasegate is tested with, and whether a CLI is inside.

The window is data in the package, ``window.json`` beside this module, updated with the lock:
the oldest and the locked claude-agent-sdk, the (claude-agent-sdk, Claude Code) pairs the
compatibility suite ran, the pairs known not to work with phasegate (each with its reason),
and the Python versions. A Claude Code version is *inside* when it lies between the oldest
and the newest tested Claude Code versions, both included, compared number by number
(``2.1.99 < 2.1.330``), and no known incompatibility names it.

Outside is a warning, never an error: :func:`warn_outside_window` issues a
:class:`~phasegate.errors.ClaudeCodeVersionWarning` once per process and version, saying
which version, what the window is and what to do. An unknown version (a CLI that would not
say) is not checked, so it is not warned about.
"""

from __future__ import annotations

import functools
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from phasegate.errors import ClaudeCodeVersionWarning

WINDOW_FILE = Path(__file__).with_name("window.json")
"""The tested window, as shipped in the package."""

WindowStatus = Literal["inside", "older", "newer", "incompatible", "unknown"]
"""Where a Claude Code version stands: inside the window, older or newer than every tested
release, known not to work, or unknown (the CLI did not say)."""

_LEADING_NUMBERS = re.compile(r"\d+(?:\.\d+)*")


def version_key(version: str) -> tuple[int, ...] | None:
    """``version``'s leading numbers as a tuple to compare (``2.1.332-beta`` → (2, 1, 332)),
    trailing zeros dropped so that 2.1 and 2.1.0 are equal; None when it has none."""
    found = _LEADING_NUMBERS.match(version.strip())
    if found is None:
        return None
    numbers = [int(part) for part in found.group(0).split(".")]
    while len(numbers) > 1 and numbers[-1] == 0:
        numbers.pop()
    return tuple(numbers)


def _checked(version: str) -> str:
    if version_key(version) is None:
        raise ValueError(f"{version!r} is not a version number")
    return version


Version = Annotated[str, AfterValidator(_checked)]
"""A version string that starts with a number (``2.1.332``)."""


class _Entry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SdkReleases(_Entry):
    """The claude-agent-sdk releases phasegate supports: the oldest, and the one it locks."""

    oldest: Version
    locked: Version


class CheckedPair(_Entry):
    """A claude-agent-sdk release and the Claude Code it bundles, run by the compatibility
    suite on ``checked`` (a date)."""

    claude_agent_sdk: Version
    claude_code: Version
    checked: str | None = None


class KnownIncompatible(_Entry):
    """A Claude Code release (with a claude-agent-sdk release, or any when null) known not to
    work with phasegate, and why."""

    claude_agent_sdk: Version | None = None
    claude_code: Version
    reason: str

    def names(self, claude_code: str, claude_agent_sdk: str | None) -> bool:
        """Whether this entry is about that pair (an unknown SDK version matches any)."""
        if version_key(self.claude_code) != version_key(claude_code):
            return False
        if self.claude_agent_sdk is None or claude_agent_sdk is None:
            return True
        return version_key(self.claude_agent_sdk) == version_key(claude_agent_sdk)


@dataclass(frozen=True, slots=True, kw_only=True)
class WindowCheck:
    """Where one Claude Code version stands against the window, in words too."""

    status: WindowStatus
    claude_code: str | None
    claude_agent_sdk: str | None
    message: str
    """One sentence: the version, the window, and what to do when outside."""
    reason: str | None = None
    """Why the pair does not work (status ``incompatible``), as the window records it."""

    @property
    def inside(self) -> bool:
        """Whether the version is inside the tested window."""
        return self.status == "inside"

    @property
    def outside(self) -> bool:
        """Whether the version is known and outside the window (what deserves a warning)."""
        return self.status in ("older", "newer", "incompatible")


class ReleaseWindow(BaseModel):
    """The tested window, as ``window.json`` holds it."""

    model_config = ConfigDict(frozen=True, extra="ignore")  # "_about" explains the file

    claude_agent_sdk: SdkReleases
    tested: tuple[CheckedPair, ...] = Field(min_length=1)
    known_incompatible: tuple[KnownIncompatible, ...] = ()
    python: tuple[str, ...] = ()

    @property
    def oldest_claude_code(self) -> str:
        """The oldest tested Claude Code version."""
        return min((pair.claude_code for pair in self.tested), key=_sort_key)

    @property
    def newest_claude_code(self) -> str:
        """The newest tested Claude Code version."""
        return max((pair.claude_code for pair in self.tested), key=_sort_key)

    def describe(self) -> str:
        """The window in words: Claude Code and claude-agent-sdk versions."""
        sdk = self.claude_agent_sdk
        return (
            f"Claude Code {self.oldest_claude_code} to {self.newest_claude_code}, "
            f"bundled with claude-agent-sdk {sdk.oldest} to {sdk.locked}"
        )

    def check(self, claude_code: str | None, claude_agent_sdk: str | None = None) -> WindowCheck:
        """Where ``claude_code`` (run with ``claude_agent_sdk``, when known) stands."""
        key = version_key(claude_code) if claude_code is not None else None
        if claude_code is None or key is None:
            return WindowCheck(
                status="unknown",
                claude_code=claude_code,
                claude_agent_sdk=claude_agent_sdk,
                message=f"the Claude Code version is unknown, so it cannot be checked against "
                f"the tested window ({self.describe()})",
            )
        incompatible = next(
            (e for e in self.known_incompatible if e.names(claude_code, claude_agent_sdk)), None
        )
        pin = (
            f"pin claude-agent-sdk to a tested release (pip install "
            f"'claude-agent-sdk=={self.claude_agent_sdk.locked}') and run the CLI it bundles"
        )
        status: WindowStatus
        if incompatible is not None:
            status = "incompatible"
            with_sdk = f" with claude-agent-sdk {claude_agent_sdk}" if claude_agent_sdk else ""
            message = (
                f"Claude Code {claude_code}{with_sdk} is known not to work with phasegate: "
                f"{incompatible.reason}; {pin}"
            )
        elif key < _sort_key(self.oldest_claude_code):
            status = "older"
            message = (
                f"Claude Code {claude_code} is older than the releases phasegate is tested with "
                f"({self.describe()}); runs go on, but phasegate may misread what this CLI "
                f"does: {pin}"
            )
        elif key > _sort_key(self.newest_claude_code):
            status = "newer"
            message = (
                f"Claude Code {claude_code} is newer than the releases phasegate is tested with "
                f"({self.describe()}); runs go on, but this CLI may behave in ways phasegate "
                f"does not expect: {pin}, or check that your runs still behave and report what "
                "breaks to phasegate's maintainers"
            )
        else:
            status = "inside"
            message = f"Claude Code {claude_code} is inside the tested window ({self.describe()})"
        return WindowCheck(
            status=status,
            claude_code=claude_code,
            claude_agent_sdk=claude_agent_sdk,
            message=message,
            reason=incompatible.reason if incompatible is not None else None,
        )


def _sort_key(version: str) -> tuple[int, ...]:
    """The key of a version the window holds (checked when it was read)."""
    return version_key(version) or ()


@functools.cache
def release_window() -> ReleaseWindow:
    """The window shipped in the package (read once)."""
    return ReleaseWindow.model_validate_json(WINDOW_FILE.read_text(encoding="utf-8"))


_warned: set[str] = set()
"""The Claude Code versions already warned about in this process."""


def warn_outside_window(
    claude_code: str | None,
    claude_agent_sdk: str | None = None,
    *,
    window: ReleaseWindow | None = None,
) -> WindowCheck:
    """Check ``claude_code`` against ``window`` (default: the tested one) and, when it is
    outside, issue a :class:`~phasegate.errors.ClaudeCodeVersionWarning` with the check's
    message: once per process for each version."""
    check = (window or release_window()).check(claude_code, claude_agent_sdk)
    if check.outside and claude_code is not None and claude_code not in _warned:
        _warned.add(claude_code)
        warnings.warn(check.message, ClaudeCodeVersionWarning, stacklevel=2)
    return check
