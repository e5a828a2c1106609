"""A task's checks as the plugin runs them: on the project, within the time Claude Code gives.

The gate is :class:`~phasegate.tasks.checks.TaskChecks` on a
:class:`~phasegate.workspace.checks.CheckDisk`, as ``phasegate run`` runs it; what differs is
time, which Claude Code bounds and no task can raise:

- it ends a Stop hook that outlives its ``timeout`` (``plugin/hooks.json``: one value for
  every task, read when the session starts) with SIGTERM, and the turn then ends as if the
  hook had said nothing (2.1.332, verified): the gate's verdict would be lost, the warm gate
  would record a block Claude never got, and a check's command would go on alone. A stop's
  checks, and a completion tool's (its call has longer, but one bound is simpler to
  foresee), share :data:`STOP_HOOK_SECONDS` less :data:`STOP_MARGIN_SECONDS` for the gate's
  own work;
- a command's ``!`` line (``/phasegate:judge``) still running after ``BASH_DEFAULT_TIMEOUT_MS``
  (120 s unless set) is moved to the background, and the model gets a note instead of its
  output (2.1.332, verified): the judge's checks share that less
  :data:`COMMAND_MARGIN_SECONDS`.

Each bound counts from when the hook, command or call started. A command that would run
past it is stopped there, and one with less than :data:`MIN_START_SECONDS` left is not
started: either fails with a detail that says so, never taken as passed nor worded as the
check's own failure. Checks that run no command take no time worth counting and always run.

Imported only for a task that has checks: a task without any never loads the checks'
machinery.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phasegate.evidence.transcript import Usage
from phasegate.evidence.workspace import WorkspaceDiff, WorkspaceSnapshot
from phasegate.phases.checks import Check, CommandCheck, has_rubric
from phasegate.phases.model import Task
from phasegate.tasks.checks import TaskChecks
from phasegate.validators.check_runs import CheckRun
from phasegate.validators.grading import CriterionVerdict, graded_from_data
from phasegate.validators.stage_checks import (
    DETAIL_OUTPUT_CHARS,
    DETAIL_OUTPUT_LINES,
    CheckOutcome,
    CommandOutcome,
    command_text,
    describe,
    evaluate,
    output_tail,
)
from phasegate.workspace.checks import CheckDisk, DiskEvidence
from phasegate.workspace.observer import WorkspaceObserver

STOP_HOOK_SECONDS = 1200
"""The Stop hook's ``timeout`` in ``plugin/hooks.json`` (a test keeps the two equal)."""
STOP_MARGIN_SECONDS = 60
"""What a stop keeps for the gate's own work: starting, reading the session, hashing the
project before and after the checks, judging, the report and recording of a task that ends."""
COMMAND_SECONDS = 120.0
"""How long Claude Code waits for a command's ``!`` line when ``BASH_DEFAULT_TIMEOUT_MS`` is
not set."""
COMMAND_MARGIN_SECONDS = 15
"""What ``/phasegate:judge`` keeps for its own work (reading the session, judging)."""
MIN_START_SECONDS = 1.0
"""A command is not started with less time than this left: it could only be cut short."""


@dataclass(frozen=True, slots=True)
class Bound:
    """How long the checks of one judgment may take in all, and why."""

    seconds: float
    why: str
    """Where the bound comes from, said in a cut check's detail."""

    @classmethod
    def stop(cls) -> Bound:
        """A stop's, or a completion tool call's."""
        seconds = STOP_HOOK_SECONDS - STOP_MARGIN_SECONDS
        return cls(
            seconds,
            f"the plugin gives a stop's checks {seconds:g} s in all (Claude Code ends its Stop "
            f"hook at {STOP_HOOK_SECONDS} s)",
        )

    @classmethod
    def command(cls, env: Mapping[str, str] = os.environ) -> Bound:
        """``/phasegate:judge``'s, by the ``BASH_DEFAULT_TIMEOUT_MS`` in ``env``."""
        waits = COMMAND_SECONDS
        with contextlib.suppress(ValueError):  # unset, or not a number Claude Code takes
            given = int(env.get("BASH_DEFAULT_TIMEOUT_MS", "")) / 1000
            waits = given if given > 0 else waits
        seconds = max(waits - COMMAND_MARGIN_SECONDS, 0.0)
        return cls(
            seconds,
            f"/phasegate:judge gives the checks {seconds:g} s in all (Claude Code moves a "
            f"command still running after {waits:g} s, BASH_DEFAULT_TIMEOUT_MS, to the "
            "background)",
        )


def task_checks(
    task: Task, observer: WorkspaceObserver, *, started: float, bound: Bound
) -> TaskChecks:
    """``task``'s checks run on the project ``observer`` watches, within ``bound`` from
    ``started`` (a :func:`time.time`: the hook's start, in whichever process judges); its
    ``rubric`` checks by the plugin's grader (:mod:`.grading`), within the same bound."""
    disk = HookDisk(observer, started=started, bound=bound)
    if has_rubric([*task.checks, *(check for phase in task.phases for check in phase.checks)]):
        from phasegate._plugin.grading import use_grader

        use_grader(disk, task.grader, deadline=started + bound.seconds)
    return TaskChecks(task, disk)


def command_seconds(task: Task) -> float:
    """The most a judgment's command checks may take, each up to its own ``timeout``: every
    phase's and the task's own (a stop runs them all once their evidence holds)."""
    checks = [*task.checks, *(check for phase in task.phases for check in phase.checks)]
    return sum(check.timeout for check in checks if isinstance(check, CommandCheck))


def run_records(runs: Iterable[CheckRun]) -> list[dict[str, Any]]:
    """``runs`` as JSON data for the session's state (a later process reports them), with
    what a grader session behind one cost."""
    return [
        {
            **run.as_dict(),
            "phase": run.phase,
            "position": run.position,
            **(
                {"grader_usage": run.outcome.grader_usage.model_dump()}
                if run.outcome.grader_usage is not None
                else {}
            ),
        }
        for run in runs
    ]


def carried_runs(records: Sequence[Mapping[str, Any]]) -> tuple[CheckRun, ...]:
    """The check runs :func:`run_records` kept, for the run's report (``check_ms``, a
    rubric's verdicts and its grader's cost)."""
    return tuple(
        CheckRun(
            phase=record["phase"],
            position=int(record["position"]),
            outcome=CheckOutcome(
                kind=str(record["kind"]),
                description=str(record["description"]),
                ok=bool(record["passed"]),
                detail=str(record["detail"]),
                exit_code=record["exit_code"],
                criteria=_criteria(record.get("criteria")),
                grader_usage=(
                    Usage.model_validate(record["grader_usage"])
                    if isinstance(record.get("grader_usage"), dict)
                    else None
                ),
            ),
            run=int(record["run"]),
            duration_ms=int(record["duration_ms"]),
        )
        for record in records
    )


def _criteria(data: object) -> tuple[CriterionVerdict, ...]:
    """The verdicts a record kept (none when it kept none, or not in their shape)."""
    graded = graded_from_data({"verdicts": data}) if isinstance(data, list) else None
    return graded.verdicts if graded is not None else ()


class HookDisk(CheckDisk):
    """A :class:`CheckDisk` whose commands end ``bound`` after ``started`` (a
    :func:`time.time`)."""

    def __init__(self, observer: WorkspaceObserver, *, started: float, bound: Bound) -> None:
        super().__init__(observer)
        self.bound = bound
        self.deadline = started + bound.seconds

    def evidence(
        self,
        *,
        diff: WorkspaceDiff,
        tools: Mapping[str, int],
        snapshot: WorkspaceSnapshot,
        texts: Sequence[str],
    ) -> DiskEvidence:
        """:meth:`CheckDisk.evidence` whose commands end at the deadline."""
        return _Bounded(
            self.observer.workdir, deadline=self.deadline, diff=diff, tools=tools, env=self.env,
            snapshot=snapshot, texts=texts, sandbox=self.sandbox, stop=self._stop,
        )  # fmt: skip

    def evaluate(self, check: Check, evidence: DiskEvidence) -> CheckOutcome:
        """A command with too little time left is not started, and one the deadline stopped
        says so; every other check as :meth:`CheckDisk.evaluate`."""
        if not isinstance(check, CommandCheck) or not isinstance(evidence, _Bounded):
            return evaluate(check, evidence)
        if self.left() < MIN_START_SECONDS:
            return _not_started(check, self.bound)
        evidence.cut = None
        outcome = evaluate(check, evidence)
        if evidence.cut is not None:
            return _cut_short(check, self.bound, *evidence.cut)
        return outcome

    def left(self) -> float:
        """Seconds left before the deadline."""
        return self.deadline - time.time()


class _Bounded(DiskEvidence):
    """Disk evidence whose commands stop at ``deadline``; :attr:`cut` says when one did."""

    def __init__(self, workdir: Path, *, deadline: float, **evidence: Any) -> None:
        super().__init__(workdir, **evidence)
        self.deadline = deadline
        self.cut: tuple[float, CommandOutcome] | None = None
        """The seconds the last command ran and how it ended, when the deadline stopped it."""

    def run_command(self, argv: Sequence[str], timeout: float) -> CommandOutcome:
        left = self.deadline - time.time()
        if timeout <= left:
            return super().run_command(argv, timeout)
        started = time.monotonic()
        outcome = super().run_command(argv, max(left, 0.0))
        if outcome.timed_out:
            self.cut = (time.monotonic() - started, outcome)
        return outcome


def _cut_short(
    check: CommandCheck, bound: Bound, ran: float, outcome: CommandOutcome
) -> CheckOutcome:
    head = (
        f"{command_text(check.argv)} was cut short after {ran:.0f} s, before its own timeout "
        f"({check.timeout:g} s): {bound.why}; it is not taken as passed"
    )
    tail = output_tail(outcome.output)
    if tail:
        label = "last output"
        if tail.startswith("…"):
            label += (
                f" (the end only: at most {DETAIL_OUTPUT_LINES} lines and "
                f"{DETAIL_OUTPUT_CHARS} characters are kept)"
            )
        head += f"\n{label}:\n{tail}"
    return _failed(check, bound, head)


def _not_started(check: CommandCheck, bound: Bound) -> CheckOutcome:
    return _failed(
        check,
        bound,
        f"{command_text(check.argv)} was not run: {bound.why}, and the checks before it used "
        "them; it is not taken as passed",
    )


def _failed(check: CommandCheck, bound: Bound, detail: str) -> CheckOutcome:
    return CheckOutcome(
        kind=check.kind,
        description=describe(check),
        ok=False,
        detail=detail,
        remedy=(
            f"it must finish, with the checks before it, within those {bound.seconds:g} s "
            "(phasegate run has no such bound)"
        ),
    )
