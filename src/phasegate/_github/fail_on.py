"""When the step fails, and with which exit status.

``rejected`` (the default) fails a step whose verdict is anything but accepted; ``error``
fails only one that could not be judged (an error, or a pipeline stopped while still
running); ``never`` never fails. A failing step exits with the run's own exit code (1
rejected, 2 bad input, 3 error), or with its verdict's when that code is 0, so that a
failing step never passes.
"""

from __future__ import annotations

from typing import Literal

FailOn = Literal["rejected", "error", "never"]
"""What fails the step."""

JUDGED = ("accepted", "rejected")
"""The verdicts of a run that was judged to its end."""


def fails(verdict: str, fail_on: FailOn) -> bool:
    """Whether a step whose report has ``verdict`` fails under ``fail_on``."""
    if fail_on == "rejected":
        return verdict != "accepted"
    if fail_on == "error":
        return verdict not in JUDGED
    return False


def exit_status(verdict: str, exit_code: int, fail_on: FailOn) -> int:
    """The step's exit status: 0 unless it :func:`fails`; then ``exit_code`` (the run's),
    or the verdict's own exit code when ``exit_code`` is 0."""
    # Imported here: the command line imports this module at start, and stays fast.
    from phasegate.tasks.report import exit_code_of

    if not fails(verdict, fail_on):
        return 0
    return exit_code or exit_code_of(verdict)
