"""One visit of a pipeline stage: the evidence since it started, and the check that judges it.

A stage is visited once, or again after a revision (``on_fail.back_to``) or a resume. A
visit keeps the disk snapshot it started from (what ``changed`` compares against), the
successful tool calls since, and for a stage with a phased task that task's
:class:`~phasegate.tasks.gate.PhaseGate` and a timeline of snapshots at each phase claim.
:meth:`StageVisit.check` runs the exit checks and the task gate with its phases' checks
(off the event loop: a ``command`` may take minutes), on the disk the run's
:class:`~phasegate.workspace.checks.CheckDisk` watches, and says what failed.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from phasegate.evidence.transcript import AssistantText, Entry, Transcript, Usage
from phasegate.evidence.workspace import WorkspaceDiff, WorkspaceSnapshot, WorkspaceTimeline
from phasegate.phases.pipeline import Stage
from phasegate.prompts.templates import PromptTemplates
from phasegate.tasks.checks import TaskChecks
from phasegate.tasks.gate import PhaseGate
from phasegate.validators.check_runs import CheckRun, grader_usage
from phasegate.validators.issues import Issue
from phasegate.validators.protect import protect_outcome
from phasegate.validators.stage_checks import CheckOutcome, describe_task
from phasegate.validators.windows import entry_claims
from phasegate.workspace.checks import CheckDisk


@dataclass(frozen=True, slots=True)
class StageCheck:
    """The outcome of checking a stage once."""

    outcomes: tuple[CheckOutcome, ...]
    """Each exit check, then (for a stage with ``protect``) kind ``protect``, then (for a
    task stage) the task gate as kind ``task``."""
    task_feedback: str | None
    """The phase gate's feedback when the task's phases are not all accepted."""
    files_changed: tuple[str, ...]
    """Paths added, modified or deleted since the visit started."""
    task_issues: tuple[Issue, ...] = ()
    """The issues the task gate found (a task stage only)."""
    check_runs: tuple[CheckRun, ...] = ()
    """The runs of the task's checks this check made (a task stage only)."""

    @property
    def passed(self) -> bool:
        """Every check holds."""
        return all(outcome.ok for outcome in self.outcomes)

    @property
    def grader_usage(self) -> Usage:
        """What the grader sessions of this check cost: the exit checks' and the task's
        check runs' (zero when no grader session ran)."""
        total = grader_usage(self.check_runs)
        for outcome in self.outcomes:
            if outcome.grader_usage is not None:
                total = total + outcome.grader_usage
        return total

    @property
    def failed(self) -> list[str]:
        """The kinds of the checks that failed."""
        return [outcome.kind for outcome in self.outcomes if not outcome.ok]


class StageVisit:
    """The current visit of ``stage``, which started at transcript entry ``start`` and may
    take ``checks_left`` more checks."""

    def __init__(
        self,
        stage: Stage,
        workdir: Path,
        *,
        start: int,
        baseline: WorkspaceSnapshot,
        tools: Mapping[str, int],
        templates: PromptTemplates,
        checks_left: int,
        disk: CheckDisk,
    ) -> None:
        self.stage = stage
        self.workdir = workdir
        self.start = start
        self.baseline = baseline
        self.tools: Counter[str] = Counter(tools)
        self.clock = time.monotonic()
        self.timeline = WorkspaceTimeline()
        self.timeline.record(0, baseline)
        self.disk = disk
        # The task's gate counts down the same checks as the stage, so its feedback tells the
        # agent the attempts the stage really has left.
        self.gate = (
            PhaseGate(
                stage.task,
                workdir=str(workdir),
                max_attempts=max(checks_left, 1),
                templates=templates,
                checks=TaskChecks(stage.task, disk),
            )
            if stage.task is not None
            else None
        )

    def claims_a_phase(self, entry: AssistantText, position: int) -> bool:
        """Whether transcript entry ``position`` claims a phase of the stage's task."""
        task = self.stage.task
        return task is not None and bool(entry_claims(task, entry, position - self.start))

    def claimed(self, position: int, snapshot: WorkspaceSnapshot) -> None:
        """Record the disk as it was when entry ``position`` claimed a phase."""
        self.timeline.record(position + 1 - self.start, snapshot)

    def tool_succeeded(self, name: str) -> dict[str, int]:
        """Count a successful tool call; the counts so far."""
        self.tools[name] += 1
        return dict(self.tools)

    def elapsed_ms(self) -> int:
        """Milliseconds since the visit started or this was last asked."""
        now = time.monotonic()
        elapsed, self.clock = int((now - self.clock) * 1000), now
        return elapsed

    async def check(self, entries: Sequence[Entry], current: WorkspaceSnapshot) -> StageCheck:
        """Run every exit check against ``current`` and, for a task stage, the task gate
        against ``entries`` (the whole transcript so far)."""
        diff = WorkspaceDiff.between(self.baseline, current)
        # Only the stage's own text: a promise said before the stage began does not count.
        texts = [e.text for e in entries[self.start :] if isinstance(e, AssistantText)]
        timed = await self.disk.off_loop(
            self.disk.run,
            self.stage.exit_when,
            snapshot=current,
            diff=diff,
            tools=self.tools,
            texts=texts,
            brief=f"Stage: {self.stage.name}\n{self.stage.prompt or ''}".strip(),
        )
        outcomes = [outcome for outcome, _ in timed]
        if self.stage.protect:
            outcomes.append(protect_outcome(self.stage.protect, diff, str(self.workdir)))
        task_feedback: str | None = None
        task_issues: tuple[Issue, ...] = ()
        check_runs: tuple[CheckRun, ...] = ()
        if self.gate is not None:
            self.timeline.record(len(entries) - self.start, current)
            ran = len(self.gate.checks.ran)
            decision = await self.disk.off_loop(
                self.gate.check, Transcript(entries=tuple(entries[self.start :])), self.timeline
            )
            check_runs = tuple(self.gate.checks.ran[ran:])
            judgment = decision.judgment
            issues = sorted({i.code.value for p in judgment.phases for i in p.issues})
            outcomes.append(
                CheckOutcome(
                    kind="task",
                    description=describe_task(self.gate.task.name),
                    ok=judgment.accepted,
                    detail="accepted" if judgment.accepted else f"issues: {', '.join(issues)}",
                )
            )
            task_feedback = decision.feedback
            task_issues = tuple(judgment.issues)
        return StageCheck(tuple(outcomes), task_feedback, diff.paths, task_issues, check_runs)
