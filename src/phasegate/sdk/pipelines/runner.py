"""The pipeline runner: stages in one agent session, handed over by the Stop hook.

Each time the agent tries to stop, the runner checks the current stage: its ``exit_when``
checks against the disk and the stage's transcript, and for a stage with a phased ``task``
that task's :class:`~phasegate.sdk.tasks.gate.PhaseGate`. When something fails the stop is
blocked with structured feedback; when everything holds the stop is blocked with the next
stage's prompt; after the last stage the agent may stop. A stage that keeps failing goes
back to an earlier stage (``on_fail.back_to``) a bounded number of times, or ends the run
rejected.

Every transition is written to ``.phasegate/pipeline-state.json`` before the agent hears of
it, so :meth:`PipelineRunner.resume` continues a killed run from the stage it was in: with
the agent's own session resume where it can, otherwise in a fresh session with a recap.

``isolation="process"`` runs each stage in its own session instead (the way seed 004 moved
away from), for comparison.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from phasegate.errors import AgentError, PipelineStateError, RunError, UsageError
from phasegate.evidence.transcript import (
    AssistantText,
    Entry,
    SessionStart,
    ToolResult,
    Transcript,
)
from phasegate.evidence.workspace import WorkspaceSnapshot
from phasegate.modes import ISOLATIONS, Isolation, Mode
from phasegate.phases.pipeline import Pipeline, Stage
from phasegate.prompts.completion_tools import ToolAnswer, error_answer
from phasegate.prompts.stages import resume_prompt, revision_prompt, stage_feedback, stage_prompt
from phasegate.prompts.templates import PromptTemplates
from phasegate.sdk.agents.protocol import Agent, AgentRequest
from phasegate.sdk.agents.retry import RetryPolicy
from phasegate.sdk.agents.session import AgentSession
from phasegate.sdk.pipelines.report import PipelineReport
from phasegate.sdk.pipelines.state import (
    CheckResult,
    PipelineState,
    PipelineStatus,
    Revision,
    StageRecord,
    load_baseline,
    load_state,
    refuse_to_overwrite,
    save_baseline,
    save_state,
    state_path,
)
from phasegate.sdk.pipelines.visit import StageCheck, StageVisit
from phasegate.sdk.telemetry.events import EventData, EventSink, RunEvent
from phasegate.sdk.telemetry.pipeline_events import (
    PipelineCompleted,
    PipelineResumed,
    PipelineStarted,
    StageChecked,
    StageCompleted,
    StageRevision,
    StageStarted,
)
from phasegate.sdk.telemetry.task_events import ToolCalled
from phasegate.sdk.workspace.observer import WorkspaceObserver

PIPELINE_MODE: Mode = "gate"
"""The mode of every pipeline event: each stage is gated at every stop."""


class PipelineRunner:
    """Runs pipelines with one agent.

    ``isolation``: ``session`` (default) runs every stage in one session; ``process`` starts
    a new session per stage. ``on_event`` receives every :class:`RunEvent`; ``retry`` bounds
    session restarts after transient failures; ``timeout`` (seconds) bounds one call of
    :meth:`run` or :meth:`resume`.
    """

    def __init__(
        self,
        agent: Agent,
        *,
        isolation: Isolation = "session",
        prompts_dir: str | Path | None = None,
        on_event: EventSink | None = None,
        retry: RetryPolicy | None = None,
        timeout: float | None = None,
    ) -> None:
        if isolation not in ISOLATIONS:
            raise UsageError(
                f"unknown isolation {isolation!r}; choose one of: {', '.join(ISOLATIONS)}"
            )
        self.agent = agent
        self.isolation: Isolation = isolation
        self.templates = PromptTemplates(prompts_dir)
        self.on_event = on_event
        self.retry = retry or RetryPolicy()
        self.timeout = timeout

    async def run(
        self, pipeline: Pipeline, workdir: str | Path, *, restart: bool = False
    ) -> PipelineReport:
        """Run ``pipeline`` from its first stage in ``workdir``.

        An unfinished run's state in ``workdir`` is never overwritten silently: resume it, or
        pass ``restart=True`` to start over.
        """
        root = _workdir(workdir)
        if not restart:
            refuse_to_overwrite(root)
        state = PipelineState(
            pipeline=pipeline.name,
            digest=pipeline.digest(),
            run_id=uuid.uuid4().hex[:12],
            isolation=self.isolation,
            stages=[StageRecord(index=i + 1, name=s.name) for i, s in enumerate(pipeline.stages)],
        )
        return await _PipelineSession(self, pipeline, root, state).start()

    async def resume(self, pipeline: Pipeline, workdir: str | Path) -> PipelineReport:
        """Continue the interrupted run in ``workdir`` from the stage it was in.

        Raises :class:`~phasegate.errors.PipelineStateError` when there is no state, when it
        is corrupt, finished, or belongs to another pipeline definition.
        """
        root = _workdir(workdir)
        state = load_state(root)
        where = state_path(root)
        if state.pipeline != pipeline.name or state.digest != pipeline.digest():
            raise PipelineStateError(
                where,
                "digest",
                f"the run was started with another definition of pipeline {state.pipeline!r} "
                "(its stages, prompts or checks changed since); resume with the same pipeline "
                "file, or start the pipeline over",
                option="restart",
            )
        if state.status in ("accepted", "rejected"):
            raise PipelineStateError(
                where,
                "status",
                f"the run {state.run_id} already finished ({state.status}); nothing to resume. "
                "Start the pipeline over for a new run",
                option="restart",
            )
        baseline = load_baseline(root)
        return await _PipelineSession(self, pipeline, root, state, baseline=baseline).resume()

    def run_sync(
        self, pipeline: Pipeline, workdir: str | Path, *, restart: bool = False
    ) -> PipelineReport:
        """:meth:`run` for code that is not async."""
        return asyncio.run(self.run(pipeline, workdir, restart=restart))

    def resume_sync(self, pipeline: Pipeline, workdir: str | Path) -> PipelineReport:
        """:meth:`resume` for code that is not async."""
        return asyncio.run(self.resume(pipeline, workdir))


def _workdir(workdir: str | Path) -> Path:
    root = Path(workdir)
    if not root.is_dir():
        raise UsageError(f"work directory {root} does not exist or is not a directory")
    return root.resolve()


class _PipelineSession(AgentSession):
    """One process's part of a pipeline run: the observer the agent reports to."""

    def __init__(
        self,
        runner: PipelineRunner,
        pipeline: Pipeline,
        workdir: Path,
        state: PipelineState,
        *,
        baseline: WorkspaceSnapshot | None = None,
    ) -> None:
        super().__init__(runner.agent, runner.retry)
        self.runner = runner
        self.pipeline = pipeline
        self.workdir = workdir
        self.state = state
        self.templates = runner.templates
        self.workspace = WorkspaceObserver(workdir)
        self.started = time.monotonic()
        self.visit = self._visit(baseline or WorkspaceSnapshot(), state.current.tools)
        """The current visit of the current stage."""
        # What the agent was last told, and where the last check stood.
        self.checked_at = -1
        self.last_instruction: str | None = None
        self.resumed_with: str | None = None
        self.next_session_prompt: str | None = None
        self.resuming_from: str | None = None
        """The saved session a resume tries to continue (until a session starts)."""

    @property
    def stage(self) -> Stage:
        return self.pipeline.stages[self.state.stage]

    # -- entry points ---------------------------------------------------------------------
    async def start(self) -> PipelineReport:
        self._emit_started(resumed=False)
        first = self._begin_stage(0)
        self.last_instruction = first
        self.record_prompt(first)
        return await self._drive(AgentRequest(prompt=first, workdir=self.workdir))

    async def resume(self) -> PipelineReport:
        state = self.state
        reason = state.error or "the process running it stopped"
        state.status, state.error = "running", None
        state.resumes += 1
        self._emit_started(resumed=True)
        prompt = self._recap(reason)
        self.resuming_from = state.session_id
        how: Literal["session", "fresh"] = "session" if state.session_id else "fresh"
        self.emit(PipelineResumed(stage=state.stage + 1, name=self.stage.name, how=how))
        self._save()
        self.record_prompt(prompt)
        return await self._drive(
            AgentRequest(prompt=prompt, workdir=self.workdir, resume=state.session_id)
        )

    # -- AgentObserver --------------------------------------------------------------------
    def on_entry(self, entry: Entry) -> None:
        self.record(entry)
        if isinstance(entry, SessionStart):
            self._session_started(entry.session_id)
        elif isinstance(entry, ToolResult):
            self._tool_called(entry)
        elif isinstance(entry, AssistantText):
            position = len(self.entries) - 1
            if self.visit.claims_a_phase(entry, position):
                self.visit.claimed(position, self.workspace.snapshot())

    async def on_stop(self) -> str | None:
        return await self._check("stop")

    async def on_tool_call(self, name: str, arguments: dict[str, Any]) -> ToolAnswer:
        # Pipelines offer no completion tools; a call can only come from a confused agent.
        return error_answer(
            arguments,
            f"{name} is not available in a pipeline",
            "complete each phase with its marker line instead",
        )

    # -- the run --------------------------------------------------------------------------
    async def _drive(self, request: AgentRequest) -> PipelineReport:
        error: str | None = None
        next_request: AgentRequest | None = request
        try:
            async with asyncio.timeout(self.runner.timeout):
                while next_request is not None:
                    self.request = next_request
                    await self.run_agent()
                    next_request = await self._after_session()
        except RunError as exc:
            error = str(exc)
        except TimeoutError:
            error = f"the run did not finish within its timeout of {self.runner.timeout:g} s"
        if error is not None:
            self._finish("error", error)
        return self._report()

    async def run_agent(self) -> None:
        while True:
            try:
                await super().run_agent()
                return
            except AgentError as exc:
                if self.resuming_from is None:
                    raise
                self._resume_fresh(str(exc))

    def _resume_fresh(self, reason: str) -> None:
        """The saved session could not be continued: a fresh one, with the same recap."""
        self.emit(
            PipelineResumed(
                stage=self.state.stage + 1, name=self.stage.name, how="fresh", reason=reason
            )
        )
        self.resuming_from = None
        if self.request is not None:
            self.request = replace(self.request, resume=None)

    def restart_after(self, failure: str) -> None:
        """After a transient failure: a saved session that failed to resume gives way to a
        fresh one; otherwise the current session continues, with a recap."""
        if self.resuming_from is not None:
            self._resume_fresh(failure)
        elif self.state.session_id is not None and self.request is not None:
            text = self._recap(f"an infrastructure failure: {failure}")
            self.record_prompt(text)
            self.request = replace(self.request, prompt=text, resume=self.state.session_id)

    def _recap(self, reason: str) -> str:
        done = [r.name for r in self.state.stages if r.status == "accepted"]
        return resume_prompt(self.pipeline, self.state.stage, done, reason, self.templates)

    async def _after_session(self) -> AgentRequest | None:
        """The session ended: the next request, or None when the run is over."""
        if self.state.status == "running" and self.next_session_prompt is None:
            worked = self.worked_since(self.checked_at)
            instruction = await self._check("end") if worked else self.last_instruction
            if self.next_session_prompt is None:
                return self._continue_session(instruction)
        if self.next_session_prompt is None:
            return None
        # Process isolation: the next stage (or a revision) in a new session.
        prompt, self.next_session_prompt = self.next_session_prompt, None
        self.last_instruction = prompt
        self.record_prompt(prompt)
        return AgentRequest(prompt=prompt, workdir=self.workdir)

    def _continue_session(self, instruction: str | None) -> AgentRequest | None:
        """The session ended without taking up ``instruction``: continue it with that, once."""
        if self.state.status != "running":
            return None
        if instruction is None or instruction == self.resumed_with or not self.state.session_id:
            self._finish(
                "error",
                f"the agent's session ended while stage {self.stage.name} was still open (it "
                "did not take up the last instruction); resuming the run continues "
                "from there",
            )
            return None
        self.resumed_with = instruction
        return AgentRequest(prompt=instruction, workdir=self.workdir, resume=self.state.session_id)

    # -- checking a stage -----------------------------------------------------------------
    async def _check(self, trigger: Literal["stop", "end"]) -> str | None:
        """Check the current stage now; the next instruction, or None to let the agent stop."""
        if self.state.status != "running":
            return None
        index, stage, record = self.state.stage, self.stage, self.state.current
        record.attempts += 1
        record.visit_attempts += 1
        self.checked_at = len(self.entries)
        check = await self.visit.check(self.entries, self.workspace.snapshot())
        outcomes = check.outcomes
        record.checks = [CheckResult(**o.as_dict()) for o in outcomes]
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
        if check.passed:
            instruction = self._complete_stage()
        elif record.visit_attempts <= stage.on_fail.retry:
            instruction = stage_feedback(
                self.pipeline,
                index,
                outcomes,
                attempts_left=stage.on_fail.retry + 1 - record.visit_attempts,
                templates=self.templates,
                task_feedback=check.task_feedback,
            )
            self._save()
        elif stage.on_fail.back_to is not None and (
            len(self.state.revisions) < self.pipeline.max_revisions
        ):
            instruction = self._revise(self.pipeline.index_of(stage.on_fail.back_to), check)
        else:
            record.status = "rejected"
            self._close_visit()
            self._finish("rejected")
            instruction = None
        self.last_instruction = instruction
        if instruction is not None:
            self.record_prompt(instruction)
        return instruction

    def _complete_stage(self) -> str | None:
        record = self.state.current
        record.status = "accepted"
        self._close_visit()
        if self.state.stage + 1 == len(self.pipeline.stages):
            self._finish("accepted")
            return None
        prompt = self._begin_stage(self.state.stage + 1)
        if self.state.isolation == "process":
            self.next_session_prompt = prompt
            return None
        return prompt

    def _revise(self, target: int, check: StageCheck) -> str | None:
        failed = self.state.stage
        record = self.state.current
        record.status = "pending"
        self._close_visit()
        failures = [f"{o.kind}: {o.detail}" for o in check.outcomes if not o.ok]
        self.state.revisions.append(
            Revision(
                from_stage=record.name,
                to_stage=self.pipeline.stages[target].name,
                failures=failures,
            )
        )
        for later in self.state.stages[target:failed]:
            later.status = "pending"
        self.emit(
            StageRevision(
                stage=failed + 1,
                name=record.name,
                to_stage=target + 1,
                to_name=self.pipeline.stages[target].name,
                revision=len(self.state.revisions),
                failed=check.failed,
            )
        )
        self._begin_stage(target)
        prompt = revision_prompt(self.pipeline, failed, target, check.outcomes, self.templates)
        if self.state.isolation == "process":
            self.next_session_prompt = prompt
            return None
        return prompt

    # -- stage bookkeeping ----------------------------------------------------------------
    def _begin_stage(self, index: int) -> str:
        """Make stage ``index`` current (a new visit) and return its prompt."""
        self.state.stage = index
        record = self.state.current
        record.status = "running"
        record.visits += 1
        record.visit_attempts = 0
        record.tools = {}
        baseline = self.workspace.snapshot()
        save_baseline(self.workdir, baseline)
        self.visit = self._visit(baseline, {})
        self._save()
        self.emit(StageStarted(stage=index + 1, name=record.name, visit=record.visits))
        return stage_prompt(self.pipeline, index, self.templates)

    def _visit(self, baseline: WorkspaceSnapshot, tools: Mapping[str, int]) -> StageVisit:
        """A visit of the current stage that starts here."""
        return StageVisit(
            self.stage,
            self.workdir,
            start=len(self.entries),
            baseline=baseline,
            tools=tools,
            templates=self.templates,
        )

    def _close_visit(self) -> None:
        record = self.state.current
        record.duration_ms += self.visit.elapsed_ms()
        self.emit(
            StageCompleted(
                stage=record.index,
                name=record.name,
                status=record.status,
                attempts=record.attempts,
                visits=record.visits,
                duration_ms=record.duration_ms,
                files_changed=record.files_changed,
                checks=[c.model_dump() for c in record.checks],
            )
        )

    def _finish(self, status: PipelineStatus, error: str | None = None) -> None:
        if self.state.status == "running" and status == "error":
            self.state.current.duration_ms += self.visit.elapsed_ms()
        self.state.status, self.state.error = status, error
        self._save()

    # -- evidence -------------------------------------------------------------------------
    def _session_started(self, session_id: str | None) -> None:
        self.state.sessions += 1
        self.state.session_id = session_id or self.state.session_id
        self.resuming_from = None
        self._save()

    def _tool_called(self, result: ToolResult) -> None:
        name = self.tool_name(result)
        if result.ok and name is not None:
            self.state.current.tools = self.visit.tool_succeeded(name)
            self._save()
        self.emit(
            ToolCalled(
                stage=self.state.stage + 1, tool=name, tool_use_id=result.tool_use_id, ok=result.ok
            )
        )

    # -- helpers --------------------------------------------------------------------------
    def _save(self) -> None:
        save_state(self.workdir, self.state)

    def _emit_started(self, *, resumed: bool) -> None:
        self.emit(
            PipelineStarted(
                agent=self.runner.agent.name,
                workdir=str(self.workdir),
                stages=len(self.pipeline.stages),
                stage=self.state.stage + 1,
                resumed=resumed,
            )
        )

    def _report(self) -> PipelineReport:
        transcript = Transcript(entries=tuple(self.entries))
        duration = int((time.monotonic() - self.started) * 1000)
        report = PipelineReport(
            pipeline=self.pipeline.name,
            run_id=self.state.run_id,
            agent=self.runner.agent.name,
            isolation=self.state.isolation,
            verdict=self.state.status,
            success=self.state.status == "accepted",
            stages=tuple(record.model_copy() for record in self.state.stages),
            revisions=tuple(self.state.revisions),
            sessions=self.state.sessions,
            resumes=self.state.resumes,
            usage=transcript.usage(),
            duration_ms=duration,
            error=self.state.error,
            state_file=str(state_path(self.workdir)),
        )
        self.emit(
            PipelineCompleted(
                verdict=report.verdict,
                stages_accepted=sum(1 for s in report.stages if s.status == "accepted"),
                revisions=len(report.revisions),
                sessions=report.sessions,
                duration_ms=duration,
                input_tokens=report.usage.input_tokens,
                output_tokens=report.usage.output_tokens,
                cost_usd=report.usage.cost_usd,
                error=report.error,
            )
        )
        return report

    def emit(self, data: EventData) -> None:
        if self.runner.on_event is not None:
            self.runner.on_event(
                RunEvent(
                    data,
                    self.state.run_id,
                    self.pipeline.name,
                    PIPELINE_MODE,
                    isolation=self.state.isolation,
                )
            )
