"""The runner: prompt → agent session → evidence → gate → report, with events on the way.

Data flows one way. The runner sends the prompt, records every entry the agent reports,
snapshots the work directory before the run, at every completion claim, tool check and stop,
lets the :class:`~phasegate.sdk.tasks.gate.PhaseGate` judge at each stop and each completion tool
call, and returns a :class:`~phasegate.sdk.tasks.report.RunReport`.

When a session ends with gate feedback it never received (Claude Code ends the session as
soon as a structured output is given, whatever a Stop hook says), the runner resumes the
session with that feedback, within the same attempt budget. With ``on_reject: revert`` a run
that is not accepted leaves the work directory as it found it.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

from phasegate.errors import RunError, UsageError
from phasegate.evidence.transcript import (
    Entry,
    ToolResult,
    Transcript,
)
from phasegate.evidence.workspace import WorkspaceTimeline
from phasegate.modes import MODES, Mode
from phasegate.phases.model import Task
from phasegate.prompts.completion_tools import ToolAnswer, completion_tools
from phasegate.prompts.phased import phased_prompt, unstructured_prompt
from phasegate.prompts.templates import PromptTemplates
from phasegate.sdk.agents.protocol import Agent, AgentRequest
from phasegate.sdk.agents.retry import RetryPolicy
from phasegate.sdk.agents.session import AgentSession
from phasegate.sdk.tasks.assembly import RunFacts, assemble_report, verdict_of
from phasegate.sdk.tasks.gate import GateDecision, PhaseGate
from phasegate.sdk.tasks.report import RunReport
from phasegate.sdk.telemetry.event import GateTrigger
from phasegate.sdk.telemetry.events import EventData, EventSink, RunEvent
from phasegate.sdk.telemetry.task_events import (
    PhaseCompleted,
    PhaseGateChecked,
    PhaseMarker,
    PhaseStarted,
    RunCompleted,
    RunStarted,
    ToolCalled,
)
from phasegate.sdk.workspace.observer import WorkspaceObserver
from phasegate.sdk.workspace.revert import RevertReport, WorkspaceBackup
from phasegate.validators.judge import Judgment
from phasegate.validators.windows import CompletionClaim, entry_claims


class Runner:
    """Runs phased tasks with one agent.

    ``mode``: ``gate`` (default) judges at every stop and sends feedback until every phase is
    accepted or ``max_attempts`` gate checks are spent; ``single-query`` judges once at the
    end; ``unstructured`` sends the task without phase scaffolding and judges once, without
    the marker rules (the A/B baseline). ``on_event`` receives every :class:`RunEvent`;
    ``retry`` bounds restarts after transient failures; ``timeout`` (seconds) bounds the whole
    run, retries included.
    """

    def __init__(
        self,
        agent: Agent,
        *,
        mode: Mode = "gate",
        max_attempts: int = 3,
        prompts_dir: str | Path | None = None,
        on_event: EventSink | None = None,
        retry: RetryPolicy | None = None,
        timeout: float | None = None,
    ) -> None:
        if mode not in MODES:
            raise UsageError(f"unknown mode {mode!r}; choose one of: {', '.join(MODES)}")
        if max_attempts < 1:
            raise UsageError(f"max_attempts must be at least 1, got {max_attempts}")
        self.agent = agent
        self.mode: Mode = mode
        self.max_attempts = max_attempts
        self.templates = PromptTemplates(prompts_dir)
        self.on_event = on_event
        self.retry = retry or RetryPolicy()
        self.timeout = timeout

    def prompt_for(self, task: Task) -> str:
        """The first prompt this runner sends for ``task`` in its mode."""
        if self.mode == "unstructured":
            return unstructured_prompt(task, self.templates)
        return phased_prompt(task, self.templates)

    def request_for(self, task: Task, workdir: Path) -> AgentRequest:
        """The first request: the prompt, plus the completion tools and structured output the
        task asks for (the unstructured baseline gets neither)."""
        prompt = self.prompt_for(task)
        if self.mode == "unstructured":
            return AgentRequest(prompt=prompt, workdir=workdir)
        output = task.output_phase
        return AgentRequest(
            prompt=prompt,
            workdir=workdir,
            tools=completion_tools(task),
            output_schema=output.output_schema if output and output.structured_output else None,
        )

    async def run(self, task: Task, workdir: str | Path) -> RunReport:
        """Run ``task`` in ``workdir`` and return its report (never raises for a bad run)."""
        root = Path(workdir)
        if not root.is_dir():
            raise UsageError(f"work directory {root} does not exist or is not a directory")
        session = _Session(self, task, root.resolve())
        return await session.run()

    def run_sync(self, task: Task, workdir: str | Path) -> RunReport:
        """:meth:`run` for code that is not async."""
        return asyncio.run(self.run(task, workdir))


class _Session(AgentSession):
    """One run: the observer the agent reports to, and the bookkeeping behind the report."""

    def __init__(self, runner: Runner, task: Task, workdir: Path) -> None:
        super().__init__(runner.agent, runner.retry)
        self.runner = runner
        self.task = task
        self.workdir = workdir
        self.run_id = uuid.uuid4().hex[:12]
        self.workspace = WorkspaceObserver(workdir)
        self.timeline = WorkspaceTimeline()
        self.gate = PhaseGate(
            task,
            workdir=str(workdir),
            mode=runner.mode,
            max_attempts=runner.max_attempts,
            templates=runner.templates,
        )
        self.current_phase = 1
        self.started = time.monotonic()
        self.checked_at = -1
        """Entries seen at the latest gate check."""

    @property
    def transcript(self) -> Transcript:
        return Transcript(entries=tuple(self.entries))

    # -- AgentObserver ------------------------------------------------------------------
    def on_entry(self, entry: Entry) -> None:
        """Record an entry; snapshot the disk when a phase is claimed complete."""
        self.record(entry)
        if isinstance(entry, ToolResult):
            self._tool_called(entry)
        elif self.runner.mode != "unstructured":
            self._claimed(entry_claims(self.task, entry, len(self.entries) - 1))

    async def on_stop(self) -> str | None:
        """The agent wants to stop: judge, and answer with feedback or let it stop."""
        return self._check_now("stop").feedback

    async def on_tool_call(self, name: str, arguments: dict[str, Any]) -> ToolAnswer:
        """A completion tool was called: judge it now and answer in the ADR-008 shape."""
        self.timeline.record(len(self.entries), self.workspace.snapshot())
        check = self.gate.answer_tool(name, arguments, self.transcript, self.timeline)
        if check.judgment is not None:
            self._gate_events(check.judgment, self.gate.attempts, "tool", tool=name)
        return check.answer

    # -- the run ------------------------------------------------------------------------
    async def run(self) -> RunReport:
        self.emit(
            RunStarted(
                agent=self.runner.agent.name,
                workdir=str(self.workdir),
                phases=len(self.task.phases),
                max_attempts=self.runner.max_attempts,
            )
        )
        backup = self._backup() if self.task.on_reject == "revert" else None
        try:
            self.timeline.record(0, backup.snapshot if backup else self.workspace.snapshot())
            self.emit(PhaseStarted(phase=1, name=self.task.phases[0].name))
            self.request = self.runner.request_for(self.task, self.workdir)
            self.record_prompt(self.request.prompt)
            judgment, error = await self._drive()
            reverted = None
            if backup is not None and verdict_of(judgment, error) != "accepted":
                reverted = backup.restore(self.workspace.snapshot())
            return self._report(judgment, error, reverted)
        finally:
            if backup is not None:
                backup.close()

    def _backup(self) -> WorkspaceBackup:
        try:
            return WorkspaceBackup.capture(self.workspace)
        except OSError as exc:
            raise RunError(
                f"cannot back up {self.workdir} for on_reject: revert ({exc}); free disk space "
                "in the temporary directory or set on_reject: keep"
            ) from exc

    async def _drive(self) -> tuple[Judgment, str | None]:
        """Run the agent until the gate has nothing more to say; the last judgment."""
        resumed_with: GateDecision | None = None
        try:
            async with asyncio.timeout(self.runner.timeout):
                while True:
                    await self.run_agent()
                    decision = self._decision_at_end()
                    session = self.session_id()
                    if (
                        decision.feedback is None
                        or decision is resumed_with  # resumed with it, and nothing came of it
                        or session is None
                        or self.request is None
                    ):
                        return decision.judgment, None
                    # The session ended without taking the gate's feedback: resume it with that.
                    self.request = replace(self.request, prompt=decision.feedback, resume=session)
                    resumed_with = decision
        except RunError as exc:
            error = str(exc)
        except TimeoutError:
            error = f"the run did not finish within its timeout of {self.runner.timeout:g} s"
        self.timeline.record(len(self.entries), self.workspace.snapshot())
        return self.gate.judge(self.transcript, self.timeline), error

    def _decision_at_end(self) -> GateDecision:
        """The gate's word on the session that just ended: the last check, unless the agent
        did more after it (or never asked), in which case a new check."""
        last = self.gate.last
        if last is not None and not self.worked_since(self.checked_at):
            return last
        return self._check_now("end")

    def _check_now(self, trigger: GateTrigger) -> GateDecision:
        """A counted gate check on everything so far; its feedback is recorded as sent."""
        self.timeline.record(len(self.entries), self.workspace.snapshot())
        decision = self.gate.check(self.transcript, self.timeline)
        self.checked_at = len(self.entries)
        self._gate_events(decision.judgment, decision.attempt, trigger)
        if decision.feedback is not None:
            self.record_prompt(decision.feedback)
        return decision

    def _report(
        self, judgment: Judgment, error: str | None, reverted: RevertReport | None
    ) -> RunReport:
        report = assemble_report(
            judgment,
            RunFacts(
                run_id=self.run_id,
                task=self.task.name,
                mode=self.runner.mode,
                agent=self.runner.agent.name,
                transcript=self.transcript,
                times=self.times,
                attempts=self.gate.attempts,
                phase_attempts=self.gate.phase_attempts,
                duration_ms=int((time.monotonic() - self.started) * 1000),
                retries=self.session_retries,
                api_retries=self.api_retries,
                error=error,
                reverted=reverted,
            ),
        )
        for phase in report.phases:
            self.emit(
                PhaseCompleted(
                    phase=phase.index,
                    name=phase.name,
                    status=phase.status,
                    attempts=phase.attempts,
                    duration_ms=phase.duration_ms,
                    completed_by=phase.completed_by,
                    tools=phase.tools,
                    tool_errors=phase.tool_errors,
                    files_changed=phase.files_changed,
                    input_tokens=phase.usage.input_tokens,
                    output_tokens=phase.usage.output_tokens,
                    cost_usd=phase.usage.cost_usd,
                    issues=[i.code.value for i in phase.issues],
                )
            )
        self.emit(
            RunCompleted(
                verdict=report.verdict,
                attempts=report.attempts,
                duration_ms=report.duration_ms,
                files_changed=report.files_changed,
                findings=[f.code.value for f in report.findings],
                reverted=report.reverted is not None,
                input_tokens=report.usage.input_tokens,
                output_tokens=report.usage.output_tokens,
                cost_usd=report.usage.cost_usd,
                error=error,
            )
        )
        return report

    def restart_after(self, failure: str) -> None:
        """Continue the same session after a transient failure, if there is one to resume."""
        session = self.session_id()
        if session is None or self.request is None:
            return  # nothing to resume: the next attempt starts from the task prompt again
        text = self.runner.templates.render("resume.md", reason=failure)
        self.record_prompt(text)
        self.request = replace(self.request, prompt=text, resume=session)

    # -- helpers ------------------------------------------------------------------------

    def _gate_events(
        self, judgment: Judgment, attempt: int, trigger: GateTrigger, tool: str | None = None
    ) -> None:
        for phase in judgment.phases:
            self.emit(
                PhaseGateChecked(
                    phase=phase.index,
                    name=phase.name,
                    attempt=attempt,
                    trigger=trigger,
                    accepted=phase.accepted,
                    issues=[issue.code.value for issue in phase.issues],
                    tool=tool,
                )
            )

    def _tool_called(self, result: ToolResult) -> None:
        self.emit(
            ToolCalled(
                phase=self.current_phase,
                tool=self.tool_name(result),
                tool_use_id=result.tool_use_id,
                ok=result.ok,
            )
        )

    def _claimed(self, claims: list[CompletionClaim]) -> None:
        if not claims:
            return
        self.timeline.record(len(self.entries), self.workspace.snapshot())
        for claim in claims:
            self.emit(
                PhaseMarker(
                    phase=claim.index,
                    name=self.task.phases[claim.index - 1].name,
                    text=claim.text,
                    source=claim.source,
                )
            )
            if claim.index >= self.current_phase and claim.index < len(self.task.phases):
                self.current_phase = claim.index + 1
                self.emit(
                    PhaseStarted(
                        phase=self.current_phase,
                        name=self.task.phases[self.current_phase - 1].name,
                    )
                )

    def emit(self, data: EventData) -> None:
        if self.runner.on_event is not None:
            self.runner.on_event(RunEvent(data, self.run_id, self.task.name, self.runner.mode))
