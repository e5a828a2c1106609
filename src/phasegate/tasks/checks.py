"""The gate's proof that the work is right: a task's checks, run on the disk at every judgment.

The pure judgment (:func:`~phasegate.validators.judge.judge`) says whether the agent acted:
tools that succeeded, files that changed, claims in its own words. :class:`TaskChecks` then
runs the checks that say whether the result is right, the same checks a stage's
``exit_when`` takes, by the one evaluation there is:

- a phase's ``checks`` run once its other evidence holds (a phase with another issue is not
  checked: its work is not done yet); ``changed``, ``tools_used`` and ``said`` look at the
  phase's own window, everything else at the disk as it is now;
- every gate check runs them again on the disk as it is then, so a phase accepted earlier
  is accepted at the end only if its checks still hold on the disk the run ends with: a later
  phase cannot quietly break an earlier phase's proof;
- the task's own ``checks`` run when every phase is otherwise accepted (the final
  acceptance), on the whole run's evidence; a failure is an issue of the last phase.

Each list is judged on the disk as the check disk sees it at that moment (with a disk) or as
the timeline last saw it (without one).

A check whose evidence is the same as at an earlier run (the disk for most kinds; the
phase's changes, tools or text for ``changed``, ``tools_used`` and ``said``) is
not run again: that run's outcome decides, and its :class:`~phasegate.validators.check_runs.
CheckRun` says which of the gate's judgments it was. Without a disk to run on
(``disk=None``), or when the gate only describes a run that ended in error, a check that has
no outcome for the disk as it is is a ``check_not_run`` issue: never taken as passed. Checks
``skipped`` on purpose (a judgment asked to run nothing) are left out altogether, and the
report says so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from phasegate.evidence.transcript import AssistantText, Transcript
from phasegate.evidence.workspace import WorkspaceDiff, WorkspaceSnapshot, WorkspaceTimeline
from phasegate.phases.checks import Changed, Check, Rubric, Said, ToolsUsed
from phasegate.phases.model import Task
from phasegate.validators.check_runs import CheckRun, check_issues, not_run_issue
from phasegate.validators.issues import Issue
from phasegate.validators.judge import Judgment, PhaseJudgment

if TYPE_CHECKING:  # the disk's machinery loads only with a task that has checks to run on it
    from phasegate.workspace.checks import CheckDisk


@dataclass(frozen=True, slots=True)
class _Evidence:
    """What one list of checks is judged on; equal evidence (the part a check looks at)
    gives equal outcomes."""

    snapshot: WorkspaceSnapshot
    diff: WorkspaceDiff
    tools: tuple[tuple[str, int], ...]
    texts: tuple[str, ...]

    def seen_by(self, check: Check) -> object:
        """The part of this evidence ``check`` looks at: the window's changes, tools or
        text for ``changed``, ``tools_used`` and ``said``, the disk and the changes for a
        ``rubric`` (the agent insisting over the same work gets the same verdict), the disk
        for every other kind (the phase's window growing by a completion call or closing
        words changes no command's outcome)."""
        if isinstance(check, Changed):
            return self.diff
        if isinstance(check, ToolsUsed):
            return self.tools
        if isinstance(check, Said):
            return self.texts
        if isinstance(check, Rubric):  # the work it is shown; a new claim is not new work
            return (self.snapshot, self.diff)
        return self.snapshot


class TaskChecks:
    """Runs a task's checks on ``disk`` (None: nothing can run, so checks are not run);
    ``skipped``: the caller asked that no check run, and none is judged."""

    def __init__(self, task: Task, disk: CheckDisk | None, *, skipped: bool = False) -> None:
        self.task = task
        self.disk = disk
        self.skipped = skipped
        self._kept: dict[tuple[int | None, int], tuple[_Evidence, CheckRun]] = {}
        self.ran: list[CheckRun] = []
        """Every run made so far, in order (kept outcomes are not runs)."""

    @property
    def any(self) -> bool:
        """Whether the task has a check anywhere."""
        return bool(self.task.checks) or any(phase.checks for phase in self.task.phases)

    def apply(
        self,
        judgment: Judgment,
        transcript: Transcript,
        timeline: WorkspaceTimeline,
        *,
        attempt: int,
        run: bool = True,
    ) -> Judgment:
        """``judgment`` with the checks of every phase whose other evidence holds, and then
        the task's own, run (``run=False``: only outcomes kept for this very disk count) as
        gate check number ``attempt``; failures are ``check_failed`` issues."""
        if not self.any or self.skipped:
            return judgment
        snapshot = self.disk.snapshot() if self.disk is not None and run else timeline.latest
        phases: list[PhaseJudgment] = []
        for phase in judgment.phases:
            checks = self.task.phases[phase.index - 1].checks
            if not checks or phase.issues:
                phases.append(phase)
                continue
            evidence = _Evidence(
                snapshot,
                timeline.diff(phase.start, phase.end),
                tuple(sorted(phase.tools.items())),
                _texts(transcript, phase.start, phase.end),
            )
            brief = _brief(self.task, phase.index)
            runs, issues = self._checked(
                phase.index, checks, evidence, attempt, run, phase.index, brief
            )
            phases.append(replace(phase, checks=runs, issues=(*phase.issues, *issues)))
        judged = replace(judgment, phases=tuple(phases))
        if not self.task.checks or not judged.accepted:
            return judged
        tools: Counter[str] = Counter()
        for phase in judged.phases:
            tools.update(phase.tools)
        evidence = _Evidence(
            snapshot,
            timeline.total(),
            tuple(sorted(tools.items())),
            _texts(transcript, 0, len(transcript.entries)),
        )
        last = judged.phases[-1]
        runs, issues = self._checked(
            None, self.task.checks, evidence, attempt, run, last.index, _brief(self.task, None)
        )
        if issues:
            phases[-1] = replace(last, issues=(*last.issues, *issues))
        return replace(judged, phases=tuple(phases), task_checks=runs)

    def _checked(
        self,
        phase: int | None,
        checks: Sequence[Check],
        evidence: _Evidence,
        attempt: int,
        run: bool,
        owner: int,
        brief: str,
    ) -> tuple[tuple[CheckRun, ...], tuple[Issue, ...]]:
        """The runs of ``checks`` on ``evidence`` (kept ones reused), and their issues,
        given to phase ``owner``."""
        runs: list[CheckRun | None] = []
        stale: list[int] = []
        for position in range(len(checks)):
            kept = self._kept.get((phase, position))
            if kept is not None and kept[0].seen_by(checks[position]) == evidence.seen_by(
                checks[position]
            ):
                runs.append(replace(kept[1], fresh=False))
            else:
                runs.append(None)
                stale.append(position)
        if stale and run and self.disk is not None:
            timed = self.disk.run(
                [checks[position] for position in stale],
                snapshot=evidence.snapshot,
                diff=evidence.diff,
                tools=dict(evidence.tools),
                texts=evidence.texts,
                brief=brief,
                others=[
                    kept.outcome
                    for kept in runs
                    if kept is not None and not isinstance(checks[kept.position], Rubric)
                ],
            )
            for position, (outcome, duration_ms) in zip(stale, timed, strict=True):
                made = CheckRun(
                    phase=phase,
                    position=position,
                    outcome=outcome,
                    run=attempt,
                    duration_ms=duration_ms,
                )
                self._kept[(phase, position)] = (evidence, made)
                self.ran.append(made)
                runs[position] = made
        issues: list[Issue] = []
        done: list[CheckRun] = []
        for position, checked in enumerate(runs):
            if checked is None:
                from phasegate.validators.stage_checks import describe

                where = f"checks[{position}]" if phase is not None else f"task checks[{position}]"
                issues.append(not_run_issue(where, describe(checks[position]), phase=owner))
                continue
            done.append(checked)
            if not checked.passed:
                issues.extend(check_issues(checked, phase=owner))
        return tuple(done), tuple(issues)


def _texts(transcript: Transcript, start: int, end: int) -> tuple[str, ...]:
    """The agent's own text blocks in entries ``[start, end)``."""
    return tuple(
        entry.text for entry in transcript.entries[start:end] if isinstance(entry, AssistantText)
    )


def _brief(task: Task, phase: int | None) -> str:
    """The instructions a grader judges phase ``phase``'s work against (None: the whole
    task's): the task's name and goal, then the phase's instructions or every phase's."""
    head = f"Task: {task.name}" + (f"\nGoal: {task.description}" if task.description else "")
    phases = task.phases if phase is None else (task.phases[phase - 1],)
    return "\n\n".join(
        [head, *(f"Phase {task.index_of(p)} ({p.name}):\n{p.instructions}" for p in phases)]
    )
