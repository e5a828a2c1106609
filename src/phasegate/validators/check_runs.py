"""A task's checks as the gate runs them: the record of each run, and the issue a failed one
makes.

A phase's ``checks`` and a task's own ``checks`` are the checks a stage's ``exit_when`` takes
(:mod:`phasegate.phases.checks`), judged by the one evaluation there is
(:mod:`phasegate.validators.stage_checks`). What this module adds is what a *task* needs
around it: a :class:`CheckRun` says where a check belongs (a phase, or the task), which gate
check ran it and how long it took; :func:`check_issues` turns a failed one into the
``check_failed`` issue whose message carries what ran and what it printed, so the model can
act on it (a rubric a grader judged: a ``criterion_not_met`` issue per criterion not met,
with the grader's reason); :func:`not_run_issue` is the issue of a check the gate could not
run (the run ended in error before it), never taken as passed; :func:`grader_usage` adds up
what the grader sessions behind some runs cost.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from phasegate.evidence.transcript import Usage
from phasegate.validators.grading import criterion_issues
from phasegate.validators.issues import Issue, IssueCode

if TYPE_CHECKING:  # a task without checks never loads the checks' evaluation (its Stop hook)
    from phasegate.validators.stage_checks import CheckOutcome

TASK_CHECKS = "task"
"""Where a task's own checks belong, in a :class:`CheckRun` and its event: no single phase."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckRun:
    """One check of a task, as the gate last ran it."""

    phase: int | None
    """The 1-based phase whose ``checks`` hold it; None for the task's own ``checks``."""
    position: int
    """Its 0-based place in that list."""
    outcome: CheckOutcome
    run: int
    """The gate check (the run's attempt number) whose run of it decided: the one that ran
    it, or an earlier one on the same disk whose outcome was kept."""
    duration_ms: int
    """How long that run took: the check's own time, never the model's or the gate's."""
    fresh: bool = True
    """Whether it ran at the gate check that asked (False: kept from ``run``, as nothing the
    check reads had changed)."""

    @property
    def passed(self) -> bool:
        """Whether it holds."""
        return self.outcome.ok

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready data, the report's shape of a check."""
        return {
            "kind": self.outcome.kind,
            "description": self.outcome.description,
            "passed": self.outcome.ok,
            "detail": self.outcome.detail,
            "exit_code": self.outcome.exit_code,
            "duration_ms": self.duration_ms,
            "run": self.run,
            **(
                {"criteria": [verdict.as_dict() for verdict in self.outcome.criteria]}
                if self.outcome.criteria
                else {}
            ),
        }


def grader_usage(runs: Iterable[CheckRun]) -> Usage:
    """What the grader sessions behind ``runs`` cost: each outcome's ``grader_usage`` added
    (a run no grader session ran for adds nothing). Over every run a gate made (its
    ``ran``: kept outcomes are not runs), each grader session counts exactly once."""
    total = Usage()
    for run in runs:
        if run.outcome.grader_usage is not None:
            total = total + run.outcome.grader_usage
    return total


def check_issues(run: CheckRun, *, phase: int) -> tuple[Issue, ...]:
    """The issues of a failed check: a ``criterion_not_met`` per criterion a grader did not
    find met (a rubric it judged), else its one ``check_failed`` issue."""
    if run.outcome.criteria:
        owner = (
            f"checks[{run.position}]" if run.phase is not None else f"task checks[{run.position}]"
        )
        return criterion_issues(run.outcome.criteria, owner=owner, phase=phase)
    return (check_issue(run, phase=phase),)


def check_issue(run: CheckRun, *, phase: int) -> Issue:
    """The ``check_failed`` issue of a failed check, for phase ``phase`` (the last phase for
    a task's own checks). Its message holds what was found: for a command, what ran, its
    exit code and the end of its output (already bounded, the cut said)."""
    outcome = run.outcome
    owner = _owner(run)
    return Issue.of(
        IssueCode.CHECK_FAILED,
        f"{owner} failed: {outcome.detail}",
        phase=phase,
        field=owner,
        requirement=f"{outcome.description}: {outcome.remedy}" if outcome.remedy else None,
    )


def _owner(run: CheckRun) -> str:
    """Where the check is: ``checks[0]`` of its phase, or ``task checks[0]``."""
    return f"checks[{run.position}]" if run.phase is not None else f"task checks[{run.position}]"


def not_run_issue(owner: str, description: str, *, phase: int) -> Issue:
    """The ``check_not_run`` issue of a check the gate did not run on the disk as it is:
    the run ended (an error, a time limit) before it could."""
    return Issue.of(
        IssueCode.CHECK_NOT_RUN,
        f"{owner} was not run on the final disk ({description}): the run ended before the "
        "gate could run it",
        phase=phase,
        field=owner,
        requirement=description,
        group="missing",
    )
