"""The words of a stage's exit checks: what each requires, as a short clause.

The clauses appear twice: in the stage prompt, so the agent knows what "done" means before
it starts, and in each :class:`~phasegate.validators.exit_checks.CheckOutcome`, so feedback
and reports say what must hold. The small helpers below phrase commands, counts and lists
the same way in descriptions and in what evaluation found.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import assert_never

from phasegate.phases.checks import (
    Changed,
    Check,
    CommandCheck,
    DirFiles,
    FileExists,
    JsonValid,
    MinLines,
    Said,
    ToolsUsed,
)
from phasegate.phases.promises import promise_tag

LISTED_NAMES = 10
"""Names a detail lists before it says "and N more"."""


def describe(check: Check) -> str:
    """What ``check`` requires, as a short clause (``architecture.md exists``)."""
    match check:
        case FileExists():
            return f"{check.path} exists"
        case MinLines():
            return f"{check.path} has at least {counted(check.n, 'line')}"
        case JsonValid():
            if check.schema_ is None:
                return f"{check.path} holds valid JSON"
            return f"{check.path} holds JSON valid against its schema"
        case CommandCheck():
            return (
                f"{command_text(check.argv)} exits with {check.exit_code} "
                f"within {check.timeout:g} s"
            )
        case Changed():
            return f"a file matching {check.glob} is added or modified"
        case ToolsUsed():
            return f"{either(check.tools)} is used successfully at least once"
        case DirFiles():
            if check.min == 0:
                return f"the directory {check.path} exists"
            return (
                f"{check.path} holds at least {counted(check.min, 'file')} (subdirectories count)"
            )
        case Said():
            return (
                f"you say {promise_tag(check.text)} yourself in this stage, on a line of its "
                "own, outside code"
            )
        case _:
            assert_never(check)


def describe_task(name: str) -> str:
    """What a stage's phased task requires, worded like :func:`describe`."""
    return f"every phase of task {name} is accepted by the gate"


def command_text(argv: Sequence[str]) -> str:
    """``argv`` quoted as a shell would need it, in backticks."""
    # For display only: the command never runs in a shell.
    return f"`{shlex.join(argv)}`"


def counted(n: int, noun: str) -> str:
    """``1 line``, ``7 lines``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def either(names: Sequence[str]) -> str:
    """``Edit``; ``Edit, MultiEdit or Write``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def listing(names: Sequence[str]) -> str:
    """``names`` joined by commas, at most :data:`LISTED_NAMES` of them, then a count."""
    shown = ", ".join(names[:LISTED_NAMES])
    more = len(names) - LISTED_NAMES
    return shown if more <= 0 else f"{shown} and {more} more"
