"""One process's part of a pipeline run: the agent's observer, and the loop of its sessions.

Each time the agent tries to stop, the current stage is checked
(:class:`~phasegate.pipelines.progress.StageProgress`). What the agent hears next, and
what happens when a session ends or fails, is decided by the conversation's state machine
(:func:`~phasegate.pipelines.machine.step`); this class only carries out its actions.
Transient failures are retried by the retry policy alone (in :class:`RunObserver`). A
recorded run (``recorder``) notes each visit and check
(:class:`~phasegate.pipelines.recorded.VisitLog`) and writes its recording when this call
ends, however it ends.

It is one piece past 500 lines: the observer's callbacks, the loop of sessions and the
accounting of one run share its state (the transcript's stage positions, the refusals, the
conversation); a branch of a parallel pipeline is this same run, told by a
:class:`BranchPart` where it keeps its state and how its first session opens.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from phasegate.agents.observer import ObserverSettings, RunObserver
from phasegate.agents.protocol import AgentRequest
from phasegate.errors import AgentError, RunError
from phasegate.evidence.confinement import Blocked, blocked_attempts
from phasegate.evidence.overhead import GateOverhead, split_overhead
from phasegate.evidence.transcript import (
    AssistantText,
    Entry,
    SandboxBlocked,
    SessionStart,
    StopOverridden,
    ToolCall,
    ToolRefused,
    ToolResult,
    Transcript,
)
from phasegate.evidence.usage_split import UsageSplit, split_usage
from phasegate.evidence.workspace import WorkspaceSnapshot
from phasegate.modes import Mode
from phasegate.phases.checks import has_rubric
from phasegate.phases.pipeline import Pipeline, stage_checks
from phasegate.pipelines import machine as m
from phasegate.pipelines.progress import StageProgress, StateFiles
from phasegate.pipelines.recorded import VisitLog
from phasegate.pipelines.report import (
    PipelineReport,
    ProcessFigures,
    completed_event,
    pipeline_report,
)
from phasegate.pipelines.state import PipelineState, state_path
from phasegate.prompts.completion_tools import ToolAnswer, error_answer
from phasegate.prompts.gate_text import pipeline_words
from phasegate.recording.model import RecordingKind, RunRecord
from phasegate.recording.recorder import Recorder
from phasegate.tasks.report import RefusedCall
from phasegate.telemetry.events import (
    AttemptBlocked,
    CallRefused,
    EventData,
    PipelineCompleted,
    PipelineResumed,
    PipelineStarted,
    RunEvent,
    ToolCalled,
)
from phasegate.validators.protect import WRITE_TOOL_PATHS, write_refusal
from phasegate.validators.tools import CallRecord

PIPELINE_MODE: Mode = "gate"
"""The mode of every pipeline event: each stage is gated at every stop."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BranchPart:
    """What makes a run one part of a branch of a parallel pipeline
    (:mod:`~phasegate.pipelines.parallel`): its ``branch``, where its state is kept
    (``files``), and how its first session opens: continuing session ``resume`` (``fork``:
    under a new id) with ``preamble`` before the first stage's prompt. Its events carry the
    branch and the stages' numbers in the whole pipeline; the run's own events
    (``pipeline.started``, ``pipeline.completed``) are the parallel run's to send."""

    branch: str
    files: StateFiles
    resume: str | None = None
    fork: bool = False
    preamble: str = ""
    whole: Pipeline | None = None
    """The whole pipeline, which its prompts number the stages in."""
    start: int = 0
    """The stage (0-based) it starts at: a later part of a branch runs the branch's earlier
    stages too, already accepted, so its ``back_to`` may name them."""


class PipelineRun(RunObserver):
    """Drives one call of ``PipelineRunner.run`` or ``resume`` to its report."""

    def __init__(
        self,
        settings: ObserverSettings,
        pipeline: Pipeline,
        workdir: Path,
        state: PipelineState,
        *,
        baseline: WorkspaceSnapshot | None = None,
        recorder: Recorder | None = None,
        recorded_as: RecordingKind = "pipeline",
        reshape: Callable[[PipelineReport], PipelineReport] | None = None,
        part: BranchPart | None = None,
    ) -> None:
        super().__init__(settings)
        self.part = part
        """The branch part this run is (None: a whole pipeline run)."""
        self.pipeline = pipeline
        self.workdir = workdir
        self.state = state
        self.recorder = recorder
        self.recorded_as: RecordingKind = recorded_as
        self.reshape = reshape
        """What the caller makes of the report (a loop's count), before it is recorded."""
        self.visits = VisitLog(recorder) if recorder is not None else None
        self.own_words = pipeline_words(pipeline)
        self.started = time.monotonic()
        self.progress = StageProgress(
            pipeline,
            workdir,
            state,
            templates=settings.templates,
            emit=self.emit,
            baseline=baseline,
            unobserved=settings.unobserved,
            visits=self.visits,
            files=part.files if part is not None else None,
            whole=part.whole if part is not None else None,
        )
        self.conversation: m.State = m.Done()
        self.entry_stages: list[int] = []
        """The stage (0-based) the run was in when each transcript entry was recorded."""
        self.refused: set[str] = set()
        """Ids of the calls refused before they ran."""
        self.figures = ProcessFigures()
        """What this process added to the run, once its report is made."""

    # -- entry points ---------------------------------------------------------------------
    async def start(self) -> PipelineReport:
        """Run the pipeline from its first stage."""
        return await self._recorded(self._start())

    async def resume(self) -> PipelineReport:
        """Continue the run from the stage it was in, with a recap."""
        return await self._recorded(self._resume())

    async def _recorded(self, work: Awaitable[PipelineReport]) -> PipelineReport:
        """``work``'s report, reshaped for the caller, and recorded however it ends."""
        try:
            report = await work
        except BaseException as exc:
            if self.visits is not None:
                crashed = pipeline_report(
                    self.state, agent=self.agent.name, state_file=state_path(self.workdir)
                )
                self._write_recording(crashed, f"{type(exc).__name__}: {exc}")
            raise
        if self.reshape is not None:
            report = self.reshape(report)
        if self.visits is not None:
            self._write_recording(report, None)
        return report

    def _write_recording(self, report: PipelineReport, error: str | None) -> None:
        """Write the recording (a failure to write it is a warning, never the run's end)."""
        assert self.visits is not None and self.recorder is not None
        final = None
        with contextlib.suppress(OSError):
            final = self.progress.workspace.snapshot()
        record: RunRecord = self.visits.record(
            self.recorded_as,
            report,
            Transcript(entries=tuple(self.entries)),
            final,
            error=error,
        )
        self.recorder.finish(record)

    async def _start(self) -> PipelineReport:
        await self.learn_agent_version()
        await self._confine()
        self._emit_started(resumed=False)
        part = self.part
        first = self.progress.begin_stage(part.start if part else 0, len(self.entries))
        if part is not None and part.preamble:
            first = f"{part.preamble}\n\n{first}"
        self.record_prompt(first)
        if part is not None and part.resume is not None:
            # Forking a saved session, as a resume continues one: a saved session that cannot
            # be opened (another HOME, cleaned up) gives way to a fresh session.
            self.conversation = m.Resuming(first, part.resume)
            return await self._drive(self._new_request(first, resume=part.resume, fork=part.fork))
        self.conversation = m.Working(first)
        return await self._drive(self._new_request(first, resume=None))

    async def _resume(self) -> PipelineReport:
        state = self.state
        reason = state.error or "the process running it stopped"
        state.status, state.error = "running", None
        state.resumes += 1
        await self.learn_agent_version()
        await self._confine()
        self._emit_started(resumed=True)
        prompt = self.progress.recap(reason)
        part = self.part
        # Killed before its forked session started: fork again from the same point.
        fork_from = part.resume if part is not None and state.session_id is None else None
        self.conversation = m.Resuming(prompt, fork_from or state.session_id)
        how: Literal["session", "fresh"] = "session" if state.session_id else "fresh"
        self.emit(PipelineResumed(stage=state.stage + 1, name=self.progress.stage.name, how=how))
        self.progress.save()
        if self.visits is not None:
            record, baseline = state.current, self.progress.visit.baseline
            self.visits.begin(state.stage, record.name, record.visits, len(self.entries), baseline)
        self.record_prompt(prompt)
        if part is not None and fork_from is not None:
            return await self._drive(self._new_request(prompt, resume=fork_from, fork=part.fork))
        return await self._drive(self._new_request(prompt, resume=state.session_id))

    # -- AgentObserver --------------------------------------------------------------------
    def record(self, entry: Entry) -> None:
        super().record(entry)
        self.entry_stages.append(self.state.stage)
        if isinstance(entry, SandboxBlocked):  # kept in the state: a resumed run reports it
            stages = self.state.stages
            stages[min(self.state.stage, len(stages) - 1)].blocked.append(Blocked.of(entry))

    def on_entry(self, entry: Entry) -> None:
        self.record(entry)
        if isinstance(entry, SessionStart):
            self.progress.session_started(entry.session_id)
            self.conversation, _ = m.step(self.conversation, m.SessionStarted())
        elif isinstance(entry, ToolResult):
            if entry.tool_use_id not in self.refused:  # a refused call did not run
                self._tool_called(entry)
                self.record_blocked(entry)
        elif isinstance(entry, StopOverridden):
            self.state.stop_overrides += 1
        elif isinstance(entry, AssistantText):
            position = len(self.entries) - 1
            visit = self.progress.visit
            if visit.claims_a_phase(entry, position):
                visit.claimed(position, self.progress.workspace.snapshot())

    async def on_stop(self) -> str | None:
        return await self._check("stop")

    async def on_tool_call(self, name: str, arguments: dict[str, Any]) -> ToolAnswer:
        # Pipelines offer no completion tools; a call can only come from a confused agent.
        return error_answer(
            arguments,
            f"{name} is not available in a pipeline",
            "complete each phase with its marker line instead",
        )

    # -- the loop of sessions -------------------------------------------------------------
    async def _drive(self, request: AgentRequest) -> PipelineReport:
        error: str | None = None
        next_request: AgentRequest | None = request
        try:
            async with self.deadline():
                while next_request is not None:
                    self.request = next_request
                    try:
                        await self.run_agent()
                    except AgentError as exc:
                        next_request = self._after_failure(exc)
                    else:
                        next_request = await self._after_session()
        except RunError as exc:
            error = str(exc)
        if error is not None:
            self.progress.finish("error", error)
        return self._report()

    async def _after_session(self) -> AgentRequest | None:
        """The session ended: the next request, or None when the run is over."""
        checked_at = (
            self.conversation.checked_at if isinstance(self.conversation, m.Working) else -1
        )
        worked = self.worked_since(checked_at)
        while True:
            ended = m.SessionEnded(len(self.entries), worked, self.state.session_id)
            self.conversation, action = m.step(self.conversation, ended)
            match action:
                case m.RunCheck():
                    await self._check("end")
                    worked = False
                case m.StartSession():
                    return self._request(action)
                case m.Abandon():
                    self.progress.finish(
                        "error",
                        f"the agent's session ended while stage {self.progress.stage.name} was "
                        "still open (it did not take up the last instruction); resuming the run "
                        "continues from there",
                    )
                    return None
                case _:
                    return None

    def _after_failure(self, exc: AgentError) -> AgentRequest | None:
        """The session failed and the retry policy gave up: the next request, or raise."""
        failed = m.SessionFailed(len(self.entries), str(exc), False, self.state.session_id)
        self.conversation, action = m.step(self.conversation, failed)
        match action:
            case m.StartSession():
                return self._request(action)
            case m.Stop():
                return None
            case m.Raise():
                raise exc
        raise AssertionError(f"{action} cannot follow a failure the retry policy gave up on")

    def wants_restart(self) -> bool:
        """A run that is over needs no other session, whatever became of the last one."""
        return not isinstance(self.conversation, m.Done)

    def _checked_tools(self) -> tuple[str, ...] | Literal["all"]:
        """The calls to ask about before they run (:func:`checked_tools`)."""
        return checked_tools(self.pipeline)

    def before_tool(self, call: ToolCall) -> str | None:
        """Refuse a call the current stage's ``allow_tools`` does not name, or a write to a
        path it protects, recording the refusal; None lets it run."""
        number = self.state.stage + 1
        own = [str(p) for p in self.confinement.own] if self.confinement else []
        reason = stage_refusal(self.pipeline, self.state.stage, call, str(self.workdir), own)
        if reason is None:
            return None
        self.refused.add(call.id)
        self.state.current.refusals.append(
            RefusedCall(tool=call.name, tool_use_id=call.id, input=call.brief, reason=reason)
        )
        refused = ToolRefused(tool_use_id=call.id, name=call.name, input=call.brief, reason=reason)
        self.record(refused)
        self.emit(
            CallRefused(
                stage=number, tool=call.name, tool_use_id=call.id, input=call.brief, reason=reason
            )
        )
        self.record_blocked(refused)
        return reason

    def restart_after(self, failure: str) -> None:
        """The retry policy runs another session after ``failure``: which one, the machine
        says (a fresh one for a resume, a recap of this one, or the same request)."""
        failed = m.SessionFailed(len(self.entries), failure, True, self.state.session_id)
        self.conversation, action = m.step(self.conversation, failed)
        if isinstance(action, m.StartSession):
            self.request = self._request(action)

    def _request(self, action: m.StartSession) -> AgentRequest:
        """The request that starts the session ``action`` asks for."""
        prompt = action.prompt
        match action.kind:
            case "next":
                self.record_prompt(prompt)
            case "recap":
                prompt = self.progress.recap(f"an infrastructure failure: {action.reason}")
                self.record_prompt(prompt)
            case "fresh":
                stage, name = self.state.stage + 1, self.progress.stage.name
                self.emit(
                    PipelineResumed(stage=stage, name=name, how="fresh", reason=action.reason)
                )
            case "again":
                pass  # the instruction is in the transcript already
        return self._new_request(prompt, resume=action.resume)

    def _new_request(self, prompt: str, *, resume: str | None, fork: bool = False) -> AgentRequest:
        """A request of this run: every session may be handed all the run's checks."""
        return AgentRequest(
            prompt=prompt,
            workdir=self.workdir,
            resume=resume,
            fork=fork,
            toolset=self.pipeline.toolset,
            confinement=self.confinement,
            check_before=self._checked_tools(),
            stop_blocks=self.pipeline.max_checks,
        )

    async def _check(self, trigger: Literal["stop", "end"]) -> str | None:
        """Check the current stage now; the next instruction, or None to let the agent stop."""
        checked = await self.progress.check(self.entries, trigger)
        if checked is None:
            return None
        self.conversation, _ = m.step(self.conversation, checked)
        if checked.outcome != "instruct":
            return None
        self.record_prompt(checked.text)
        return checked.text

    # -- evidence and events --------------------------------------------------------------
    def _tool_called(self, result: ToolResult) -> None:
        name = self.tool_name(result)
        if result.ok and name is not None:
            self.progress.tool_succeeded(name)
        call = self.calls.get(result.tool_use_id)
        if call is not None and call.agent is not None:
            self.progress.subagent_called(CallRecord(len(self.entries) - 1, call, result))
        self.emit(
            ToolCalled(
                stage=self.state.stage + 1, tool=name, tool_use_id=result.tool_use_id, ok=result.ok
            )
        )

    async def _confine(self) -> None:
        """Decide how the run is confined; its commands may change no path a stage protects
        (the gate judges each stage's own globs)."""
        globs = dict.fromkeys(glob for stage in self.pipeline.stages for glob in stage.protect)
        await self.confine(self.pipeline.sandbox, tuple(globs), self.workdir)
        # Here, not at the top: the plugin's hooks import this module and never confine.
        from phasegate.workspace.command_sandbox import CommandSandbox

        self.progress.disk.sandbox = CommandSandbox.of(self.sandbox, self.confinement)
        if any(has_rubric(stage_checks(stage)) for stage in self.pipeline.stages):
            grader = self.grading_agent(self.pipeline.grader)
            if grader is not None:
                self.progress.disk.use_grader(grader)

    def _emit_started(self, *, resumed: bool) -> None:
        self.emit(
            PipelineStarted(
                agent=self.agent.name,
                agent_version=self.agent_version,
                workdir=str(self.workdir),
                stages=len(self.pipeline.stages),
                stage=self.state.stage + 1,
                resumed=resumed,
            )
        )

    def _report(self) -> PipelineReport:
        transcript = Transcript(entries=tuple(self.entries))
        duration = int((time.monotonic() - self.started) * 1000)
        usage, overhead = self._add_to_run(transcript, duration)
        report = pipeline_report(
            self.state,
            agent=self.agent.name,
            agent_version=self.agent_version,
            sandbox=self.sandbox,
            state_file=state_path(self.workdir),
            final_message=transcript.final_message,
        )
        graded = self.progress.grader_usage
        self.figures = ProcessFigures(
            duration_ms=duration,
            usage=usage.total + graded,
            grader=graded,
            unattributed=usage.unattributed,
            overhead=overhead,
            refusals=len(self.refused),
            blocked=len(blocked_attempts(transcript.entries)),
        )
        recording = str(self.recorder.folder) if self.recorder is not None else None
        self.emit(completed_event(report, self.figures, recording=recording))
        return report

    def _add_to_run(
        self, transcript: Transcript, duration_ms: int
    ) -> tuple[UsageSplit, GateOverhead]:
        """Add this process's usage and overhead (stage by stage) and wall time to the run's,
        and save the state; this process's usage and overhead."""
        state, stages = self.state, self.entry_stages
        state.duration_ms += duration_ms
        split = split_usage(transcript, stages.__getitem__, len(state.stages))
        overhead = split_overhead(
            transcript,
            stages.__getitem__,
            len(state.stages),
            gate_text=self.gate_text,
            tool_characters=0,
        )
        for record, usage, added in zip(state.stages, split.parts, overhead.parts, strict=True):
            record.usage = record.usage + usage
            record.overhead = record.overhead + added
        state.unattributed_usage = state.unattributed_usage + split.unattributed
        state.usage = state.usage + split.total
        state.overhead = state.overhead + overhead.total
        self.progress.save()
        return split, overhead.total

    def blocked_event(self, entry: SandboxBlocked) -> EventData:
        """``sandbox.blocked`` in the stage the agent is in."""
        return AttemptBlocked.of(entry, stage=self.state.stage + 1)

    def emit(self, data: EventData) -> None:
        """Hand one event to the sink; a branch part leaves the run's own to the parallel run."""
        if self.part is not None and isinstance(data, PipelineStarted | PipelineCompleted):
            return
        super().emit(data)

    def run_event(self, data: EventData) -> RunEvent:
        """``data`` as an event of this run (a branch part's: its stages numbered in the whole
        pipeline, and its branch)."""
        run = self.state
        branch = None
        if self.part is not None:
            branch = self.part.branch
            number = {i + 1: record.index for i, record in enumerate(run.stages)}
            renumbered: dict[str, int] = {}
            for key in ("stage", "to_stage"):
                value = getattr(data, key, None)
                if isinstance(value, int) and value in number:
                    renumbered[key] = number[value]
            data = replace(data, **renumbered)  # type: ignore[arg-type]
        return RunEvent(
            data, run.run_id, run.pipeline, PIPELINE_MODE, isolation=run.isolation, branch=branch
        )


def checked_tools(pipeline: Pipeline) -> tuple[str, ...] | Literal["all"]:
    """The calls a pipeline's runner asks about before they run: all when a stage limits its
    tools, the file-writing tools when a stage protects paths or the pipeline is confined,
    else none."""
    stages = pipeline.stages
    if any(stage.allow_tools is not None for stage in stages):
        return "all"
    writes = any(stage.protect for stage in stages) or _confined(pipeline)
    return tuple(WRITE_TOOL_PATHS) if writes else ()


def _confined(pipeline: Pipeline) -> bool:
    """Whether the pipeline asks for a sandbox: its file tools are kept in the work directory."""
    return pipeline.sandbox is not None and pipeline.sandbox.confined


def stage_refusal(
    pipeline: Pipeline, index: int, call: ToolCall, workdir: str, own: Sequence[str] = ()
) -> str | None:
    """Why stage ``index`` (0-based, the current one) refuses ``call`` before it runs: a tool
    its ``allow_tools`` does not name, or a write to a path it protects (or, confined, outside
    the work directory or on ``own``, phasegate's own files there); None lets it run."""
    number, stage = index + 1, pipeline.stages[index]
    if stage.allow_tools is not None and call.name not in stage.allow_tools:
        allowed = ", ".join(stage.allow_tools) or "none of the runtime's tools"
        return (
            f"Refused: {call.name} is not allowed in stage {number} ({stage.name}), the "
            f"current stage, which allows {allowed}. Nothing ran. Do the stage's work with "
            "those tools; the next stage's tools are allowed once this stage's checks pass."
        )
    protected = write_refusal(
        call.name, call.input, stage.protect, workdir, confined=_confined(pipeline), own=own
    )
    return None if protected is None else f"Refused: {protected}"
