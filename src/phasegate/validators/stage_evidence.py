"""What a stage's exit checks may learn about the work directory: the evidence protocol.

Judging (:mod:`phasegate.validators.exit_checks`) stays pure by asking everything through a
:class:`StageEvidence` it is handed; the runner's implementation reads the disk and runs the
commands. What the work directory holds (file contents, command output) is untrusted: it
only ever appears as data in an outcome's detail, never as something to act on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

DETAIL_OUTPUT_LINES = 40
"""At most this many last lines of a command's output go into an outcome's detail."""
DETAIL_OUTPUT_CHARS = 2000
"""At most this many last characters of a command's output go into an outcome's detail."""


@dataclass(frozen=True, slots=True)
class CommandOutcome:
    """How one run of a check's command ended."""

    exit_code: int | None
    """The exit status (negative: killed by that signal); None when it did not finish or
    could not start."""
    output: str
    """The tail of its combined stdout and stderr."""
    timed_out: bool = False
    """Whether it was stopped for running past its timeout."""
    error: str | None = None
    """Why it could not start (``"program not found: foo"``), or None."""


class StageEvidence(Protocol):
    """What the exit checks may learn about the work directory at the end of a stage."""

    def read_text(self, path: str) -> str:
        """The text of the file at ``path`` (relative to the work directory).

        Raises an :class:`OSError` subclass when it is missing, unreadable or a directory,
        and :class:`ValueError` when the path leads outside the work directory.
        """
        ...

    def run_command(self, argv: Sequence[str], timeout: float) -> CommandOutcome:
        """Run ``argv`` (no shell) in the work directory, for at most ``timeout`` seconds."""
        ...

    def changed_paths(self) -> Sequence[str]:
        """Relative POSIX paths added or modified during the stage."""
        ...

    def tool_successes(self) -> Mapping[str, int]:
        """Successful calls per tool name during the stage."""
        ...

    def files_under(self, path: str) -> Sequence[str]:
        """The relative POSIX paths of the files inside directory ``path``, at any depth,
        as a workspace snapshot sees them (what snapshots skip is not there).

        Raises :class:`FileNotFoundError` when it does not exist, :class:`NotADirectoryError`
        when it is not a directory, and :class:`ValueError` when it leads outside the work
        directory.
        """
        ...

    def assistant_texts(self) -> Sequence[str]:
        """The agent's own text blocks during the stage, in order (never tool inputs, tool
        results or user messages)."""
        ...


def output_tail(
    text: str, *, max_lines: int = DETAIL_OUTPUT_LINES, max_chars: int = DETAIL_OUTPUT_CHARS
) -> str:
    """The end of ``text``: at most its last ``max_lines`` lines and ``max_chars``
    characters, with a leading ``…`` when something was cut."""
    lines = text.rstrip().splitlines()
    kept = "\n".join(lines[-max_lines:])
    cut = len(lines) > max_lines
    if len(kept) > max_chars:
        kept, cut = kept[-max_chars:], True
    return f"…{kept}" if cut else kept
