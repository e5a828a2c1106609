"""A pipeline run's progress through its stages: checks, hand-overs, revisions, the state file.

Every change is written to the state file before the agent hears of it, so a killed run
resumes from the stage it was in. What the agent is told next comes back from
:meth:`StageProgress.check` as a :class:`~phasegate.pipelines.machine.Checked` for the
conversation's state machine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from phasegate.evidence.transcript import Entry, Usage
from phasegate.evidence.workspace import WorkspaceSnapshot
from phasegate.modes import PipelineStatus
from phasegate.phases.pipeline import Pipeline, Stage
from phasegate.pipelines.machine import Checked
from phasegate.pipelines.recorded import VisitLog
from phasegate.pipelines.state import (
    BASELINE_FILE,
    STATE_FILE,
    CheckResult,
    PipelineState,
    Revision,
    save_baseline,
    save_state,
)
from phasegate.pipelines.visit import StageCheck, StageVisit
from phasegate.prompts.stages import resume_prompt, revision_prompt, stage_feedback, stage_prompt
from phasegate.prompts.templates import PromptTemplates
from phasegate.telemetry.events import (
    CheckRan,
    EventData,
    StageChecked,
    StageCompleted,
    StageRevision,
    StageStarted,
    grader_usage_field,
)
from phasegate.validators.subagents import with_call
from phasegate.validators.tools import CallRecord
from phasegate.workspace.checks import CheckDisk
from phasegate.workspace.observer import WorkspaceObserver


@dataclass(frozen=True, slots=True)
class StateFiles:
    """Where a run keeps its state: in ``root``'s state folder, files ``state`` and
    ``baseline``; ``saved`` is told after each save (a parallel run's branch part: the run's
    own state follows)."""

    root: Path
    state: str = STATE_FILE
    baseline: str = BASELINE_FILE
    saved: Callable[[], None] | None = None


class StageProgress:
    """Moves a run's state from stage to stage, saving it and emitting stage events."""

    def __init__(
        self,
        pipeline: Pipeline,
        workdir: Path,
        state: PipelineState,
        *,
        templates: PromptTemplates,
        emit: Callable[[EventData], None],
        baseline: WorkspaceSnapshot | None = None,
        unobserved: Sequence[Path] = (),
        visits: VisitLog | None = None,
        files: StateFiles | None = None,
        whole: Pipeline | None = None,
    ) -> None:
        self.pipeline = pipeline
        self.whole = whole or pipeline
        """The pipeline the prompts number stages in: a branch part's stages are told their
        place in the whole pipeline (``Stage 3 of 5``), not in the part."""
        self.files = files or StateFiles(workdir)
        """Where the state and baseline are kept."""
        self.workdir = workdir
        self.state = state
        self.templates = templates
        self.emit = emit
        self.visits = visits
        """The visits and checks of a recorded run (None: not recorded)."""
        contents = visits.recorder.contents if visits is not None else None
        self.workspace = WorkspaceObserver(workdir, unobserved=unobserved, contents=contents)
        self.disk = CheckDisk(self.workspace)
        self.visit = self._visit(0, baseline or WorkspaceSnapshot(), state.current.tools)
        """The current visit of the current stage."""
        self.grader_usage = Usage()
        """What the grader sessions of this process's checks cost (its part of the run's)."""

    @property
    def stage(self) -> Stage:
        """The stage the run is in."""
        return self.pipeline.stages[self.state.stage]

    def begin_stage(self, index: int, at: int) -> str:
        """Make stage ``index`` current (a new visit starting at transcript position ``at``)
        and return its prompt."""
        self.state.stage = index
        record = self.state.current
        record.status = "running"
        record.visits += 1
        record.visit_attempts = 0
        record.tools = {}
        record.subagents = []
        baseline = self.workspace.snapshot()
        self.keep_baseline(baseline)
        self.visit = self._visit(at, baseline, {})
        if self.visits is not None:
            self.visits.begin(index, record.name, record.visits, at, baseline)
        self.save()
        self.emit(StageStarted(stage=index + 1, name=record.name, visit=record.visits))
        return stage_prompt(self.whole, self._in_whole(index), self.templates)

    async def check(
        self, entries: Sequence[Entry], trigger: Literal["stop", "end"]
    ) -> Checked | None:
        """Check the current stage against ``entries``; what follows (None when the run is
        not running)."""
        if self.state.status != "running":
            return None
        index, stage, record = self.state.stage, self.stage, self.state.current
        record.attempts += 1
        record.visit_attempts += 1
        at = len(entries)
        check = await self.visit.check(entries, self.workspace.snapshot())
        for run in check.check_runs:
            self.emit(CheckRan.of(run, stage=index + 1))
        graded = check.grader_usage
        if not graded.is_zero:
            # Counted as it is spent, in the stage, the run and this process alike, so the
            # state saved next adds up whenever the process ends.
            record.grader_usage = record.grader_usage + graded
            self.state.usage = self.state.usage + graded
            self.grader_usage = self.grader_usage + graded
        record.checks = [CheckResult(**o.as_dict()) for o in check.outcomes]
        record.files_changed = list(check.files_changed)
        self.emit(
            StageChecked(
                stage=index + 1,
                name=stage.name,
                attempt=record.visit_attempts,
                trigger=trigger,
                passed=check.passed,
                failed=check.failed,
            )
        )
        part, attempt = self.visits.current if self.visits else -1, record.visit_attempts
        result = self._after(check, at)
        if self.visits is not None:
            self.visits.checked(part, check, attempt, trigger, result)
        return result

    def _after(self, check: StageCheck, at: int) -> Checked:
        """What follows a check of the current stage."""
        index, stage, record = self.state.stage, self.stage, self.state.current
        if check.passed:
            return self._complete_stage(at)
        if record.visit_attempts <= stage.on_fail.retry:
            feedback = stage_feedback(
                self.pipeline,
                index,
                check.outcomes,
                attempts_left=stage.on_fail.retry + 1 - record.visit_attempts,
                templates=self.templates,
                task_feedback=check.task_feedback,
            )
            self.save()
            return Checked("instruct", at, feedback)
        back_to = stage.on_fail.back_to
        if back_to is not None and len(self.state.revisions) < self.pipeline.max_revisions:
            return self._revise(self.pipeline.index_of(back_to), check, at)
        record.status = "rejected"
        self._close_visit()
        self.finish("rejected")
        return Checked("over", at)

    def recap(self, reason: str) -> str:
        """The prompt that tells a continued or fresh session where the run stands."""
        done = [r.name for r in self.state.stages if r.status == "accepted"]
        at = self._in_whole(self.state.stage)
        return resume_prompt(self.whole, at, done, reason, self.templates)

    def finish(self, status: PipelineStatus, error: str | None = None) -> None:
        """End the run with ``status`` (and ``error``) and save it."""
        if self.state.status == "running" and status == "error":
            self.state.current.duration_ms += self.visit.elapsed_ms()
        self.state.status, self.state.error = status, error
        self.save()

    def session_started(self, session_id: str | None) -> None:
        """Count a session the agent started; keep its id for a resume."""
        self.state.sessions += 1
        self.state.session_id = session_id or self.state.session_id
        self.save()

    def tool_succeeded(self, name: str) -> None:
        """Count a successful call of tool ``name`` in the current visit."""
        self.state.current.tools = self.visit.tool_succeeded(name)
        self.save()

    def subagent_called(self, record: CallRecord) -> None:
        """Count a call a subagent made (its success counted by :meth:`tool_succeeded` too)."""
        current = self.state.current
        current.subagents = with_call(current.subagents, record, str(self.workdir))
        self.save()

    def save(self) -> None:
        """Write the state file."""
        files = self.files
        save_state(files.root, self.state, files.state)
        if files.saved is not None:
            files.saved()

    def keep_baseline(self, baseline: WorkspaceSnapshot) -> None:
        """Keep the snapshot the current stage started from, for a resume (the plugin keeps
        it, and the state, in the session's own state instead: it overrides both)."""
        save_baseline(self.files.root, baseline, self.files.baseline)

    # -- transitions ----------------------------------------------------------------------
    def _complete_stage(self, at: int) -> Checked:
        self.state.current.status = "accepted"
        self._close_visit()
        if self.state.stage + 1 == len(self.pipeline.stages):
            self.finish("accepted")
            return Checked("over", at)
        return self._next(self.begin_stage(self.state.stage + 1, at), at)

    def _revise(self, target: int, check: StageCheck, at: int) -> Checked:
        failed = self.state.stage
        record = self.state.current
        record.status = "pending"
        self._close_visit()
        to_name = self.pipeline.stages[target].name
        failures = [f"{o.kind}: {o.detail}" for o in check.outcomes if not o.ok]
        self.state.revisions.append(
            Revision(from_stage=record.name, to_stage=to_name, failures=failures)
        )
        for later in self.state.stages[target:failed]:
            later.status = "pending"
        self.emit(
            StageRevision(
                stage=failed + 1,
                name=record.name,
                to_stage=target + 1,
                to_name=to_name,
                revision=len(self.state.revisions),
                failed=check.failed,
            )
        )
        self.begin_stage(target, at)
        prompt = revision_prompt(
            self.whole,
            self._in_whole(failed),
            self._in_whole(target),
            check.outcomes,
            self.templates,
        )
        return self._next(prompt, at)

    def _next(self, prompt: str, at: int) -> Checked:
        """``prompt`` opens the next visit: in this session, or in a new one per stage."""
        if self.state.isolation == "process":
            return Checked("hand_over", at, prompt)
        return Checked("instruct", at, prompt)

    def _in_whole(self, index: int) -> int:
        """Stage ``index`` of this run's pipeline, as a position in :attr:`whole`."""
        if self.whole is self.pipeline:
            return index
        return self.whole.index_of(self.pipeline.stages[index].name)

    def _visit(self, at: int, baseline: WorkspaceSnapshot, tools: Mapping[str, int]) -> StageVisit:
        return StageVisit(
            self.stage,
            self.workdir,
            start=at,
            baseline=baseline,
            tools=tools,
            templates=self.templates,
            checks_left=self.stage.on_fail.retry + 1 - self.state.current.visit_attempts,
            disk=self.disk,
        )

    def _close_visit(self) -> None:
        record = self.state.current
        record.duration_ms += self.visit.elapsed_ms()
        self.emit(
            StageCompleted(
                stage=self.state.stage + 1,
                name=record.name,
                status=record.status,
                attempts=record.attempts,
                visits=record.visits,
                duration_ms=record.duration_ms,
                files_changed=record.files_changed,
                checks=[c.model_dump() for c in record.checks],
                subagents=[work.model_dump(mode="json") for work in record.subagents],
                grader_usage=grader_usage_field(record.grader_usage),
            )
        )
