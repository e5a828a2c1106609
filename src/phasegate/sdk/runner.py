"""The runner: prompt → agent session → evidence → gate → report, with events on the way.

Data flows one way. The runner sends the prompt, records every entry the agent reports,
snapshots the work directory before the run, at every phase marker and at every stop, lets
the :class:`~phasegate.sdk.gate.PhaseGate` judge at each stop, and returns a
:class:`~phasegate.sdk.report.RunReport`.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from tenacity import RetryCallState

from phasegate.errors import RunError, UsageError
from phasegate.evidence.transcript import (
    AssistantText,
    Entry,
    RunResult,
    SessionStart,
    ToolCall,
    ToolResult,
    Transcript,
    Usage,
    UserText,
)
from phasegate.evidence.workspace import WorkspaceTimeline
from phasegate.phases.model import Task
from phasegate.prompts.phased import phased_prompt, unstructured_prompt
from phasegate.prompts.templates import PromptTemplates
from phasegate.sdk.agent import Agent, AgentRequest
from phasegate.sdk.events import EventSink, RunEvent
from phasegate.sdk.gate import PhaseGate
from phasegate.sdk.report import Mode, PhaseReport, PhaseStatus, RunReport
from phasegate.sdk.retry import RetryPolicy, retry_delay_ms
from phasegate.sdk.workspace import WorkspaceObserver
from phasegate.validators.judge import Judgment
from phasegate.validators.windows import work_markers

MODES: tuple[Mode, ...] = ("gate", "single-query", "unstructured")


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


class _Session:
    """One run: the observer the agent reports to, and the bookkeeping behind the report."""

    def __init__(self, runner: Runner, task: Task, workdir: Path) -> None:
        self.runner = runner
        self.task = task
        self.workdir = workdir
        self.run_id = uuid.uuid4().hex[:12]
        self.entries: list[Entry] = []
        self.times: list[float] = []
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
        self.request: AgentRequest | None = None
        self.session_retries = 0
        self.api_retries = 0

    # -- AgentObserver ------------------------------------------------------------------
    def on_entry(self, entry: Entry) -> None:
        """Record an entry; snapshot the disk when a phase marker arrives."""
        self.entries.append(entry)
        self.times.append(time.monotonic())
        if isinstance(entry, ToolResult):
            self._tool_called(entry)
        elif isinstance(entry, AssistantText) and self.runner.mode != "unstructured":
            self._markers(entry)

    async def on_stop(self) -> str | None:
        """The agent wants to stop: judge, and answer with feedback or let it stop."""
        self.timeline.record(len(self.entries), self.workspace.snapshot())
        decision = self.gate.check(Transcript(entries=tuple(self.entries)), self.timeline)
        for phase in decision.judgment.phases:
            self._emit(
                "phase.gate",
                phase=phase.index,
                name=phase.name,
                attempt=decision.attempt,
                accepted=phase.accepted,
                issues=[issue.code.value for issue in phase.issues],
            )
        if decision.feedback is not None:
            self._record_prompt(decision.feedback)
        return decision.feedback

    def on_retry(self, *, attempt: int, reason: str, delay_ms: int, source: str) -> None:
        """Report a retry as a ``retry.scheduled`` event."""
        self.api_retries += 1
        self._emit(
            "retry.scheduled", attempt=attempt, reason=reason, delay_ms=delay_ms, source=source
        )

    # -- the run ------------------------------------------------------------------------
    async def run(self) -> RunReport:
        prompt = self.runner.prompt_for(self.task)
        self._emit(
            "run.started",
            agent=self.runner.agent.name,
            workdir=str(self.workdir),
            phases=len(self.task.phases),
            max_attempts=self.runner.max_attempts,
        )
        self.timeline.record(0, self.workspace.snapshot())
        self._emit("phase.started", phase=1, name=self.task.phases[0].name)
        self._record_prompt(prompt)
        self.request = AgentRequest(prompt=prompt, workdir=self.workdir)
        error: str | None = None
        try:
            async with asyncio.timeout(self.runner.timeout):
                async for attempt in self.runner.retry.retrying(before_sleep=self._before_retry):
                    with attempt:
                        await self.runner.agent.run(self.request, self)
        except RunError as exc:
            error = str(exc)
        except TimeoutError:
            error = f"the run did not finish within {self.runner.timeout:g} s (--timeout)"
        if error is not None or self.gate.last is None:
            # The agent failed, or ended without asking to stop: judge what there is.
            self.timeline.record(len(self.entries), self.workspace.snapshot())
            transcript = Transcript(entries=tuple(self.entries))
            if error is None:
                return self._report(self.gate.check(transcript, self.timeline).judgment, None)
            return self._report(self.gate.judge(transcript, self.timeline), error)
        return self._report(self.gate.last.judgment, None)

    def _report(self, judgment: Judgment, error: str | None) -> RunReport:
        transcript = Transcript(entries=tuple(self.entries))
        statuses = _statuses(judgment, failed=error is not None)
        usage = transcript.usage()
        cost_share = _cost_share(usage, transcript)
        phases = []
        for phase in judgment.phases:
            status = statuses[phase.index]
            report = PhaseReport(
                index=phase.index,
                name=phase.name,
                status=status,
                attempts=0 if status == "not_reached" else self.gate.phase_attempts(phase.index),
                marker_seen=phase.marker_seen,
                duration_ms=self._elapsed_ms(phase.start, phase.end),
                tools=phase.tools,
                tool_errors=phase.tool_errors,
                files_changed=list(phase.files_changed),
                usage=cost_share(transcript.turn_usage(phase.start, phase.end)),
                issues=list(phase.issues),
            )
            phases.append(report)
            self._emit(
                "phase.completed",
                phase=phase.index,
                name=phase.name,
                status=status,
                attempts=report.attempts,
                duration_ms=report.duration_ms,
                issues=[i.code.value for i in phase.issues],
            )
        verdict = "error" if error is not None else "accepted" if judgment.accepted else "rejected"
        duration_ms = int((time.monotonic() - self.started) * 1000)
        self._emit(
            "run.completed",
            verdict=verdict,
            attempts=self.gate.attempts,
            duration_ms=duration_ms,
            files_changed=list(judgment.files_changed),
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cost_usd=usage.cost_usd,
            error=error,
        )
        return RunReport(
            run_id=self.run_id,
            task=self.task.name,
            mode=self.runner.mode,
            agent=self.runner.agent.name,
            verdict=verdict,
            success=verdict == "accepted",
            attempts=self.gate.attempts,
            phases=phases,
            summary=judgment.output if verdict == "accepted" else None,
            files_changed=list(judgment.files_changed),
            files_claimed=list(judgment.files_claimed),
            usage=usage,
            duration_ms=duration_ms,
            turns=sum(e.num_turns or 0 for e in self.entries if isinstance(e, RunResult)),
            retries=self.session_retries,
            api_retries=self.api_retries,
            error=error,
            transcript=transcript,
        )

    def _before_retry(self, state: RetryCallState) -> None:
        """A transient failure: announce the retry and continue the same session if we can."""
        self.session_retries += 1
        failure = state.outcome.exception() if state.outcome is not None else None
        self._emit(
            "retry.scheduled",
            attempt=self.session_retries,
            reason=str(failure),
            delay_ms=retry_delay_ms(state),
            source="phasegate",
        )
        session = next(
            (e.session_id for e in reversed(self.entries) if isinstance(e, SessionStart)), None
        )
        if session is None or self.request is None:
            return  # nothing to resume: the next attempt starts from the task prompt again
        text = self.runner.templates.render("resume.md", reason=str(failure))
        self._record_prompt(text)
        self.request = replace(self.request, prompt=text, resume=session)

    # -- helpers ------------------------------------------------------------------------
    def _record_prompt(self, text: str) -> None:
        self.entries.append(UserText(text=text))
        self.times.append(time.monotonic())

    def _tool_called(self, result: ToolResult) -> None:
        call = next(
            (
                e
                for e in reversed(self.entries)
                if isinstance(e, ToolCall) and e.id == result.tool_use_id
            ),
            None,
        )
        self._emit(
            "tool.called",
            phase=self.current_phase,
            tool=call.name if call else None,
            tool_use_id=result.tool_use_id,
            ok=result.ok,
        )

    def _markers(self, entry: AssistantText) -> None:
        found = work_markers(self.task, entry.text)
        if not found:
            return
        self.timeline.record(len(self.entries), self.workspace.snapshot())
        for marker in found:
            self._emit(
                "phase.marker",
                phase=marker.index,
                name=self.task.phases[marker.index - 1].name,
                text=marker.text,
            )
            if marker.index >= self.current_phase and marker.index < len(self.task.phases):
                self.current_phase = marker.index + 1
                self._emit(
                    "phase.started",
                    phase=self.current_phase,
                    name=self.task.phases[self.current_phase - 1].name,
                )

    def _elapsed_ms(self, start: int, end: int) -> int:
        if not self.times or end <= start:
            return 0
        first = self.times[min(start, len(self.times) - 1)]
        last = self.times[min(end, len(self.times)) - 1]
        return int(max(last - first, 0.0) * 1000)

    def _emit(self, event: str, /, **fields: object) -> None:
        if self.runner.on_event is not None:
            self.runner.on_event(
                RunEvent(event, self.run_id, self.task.name, self.runner.mode, dict(fields))
            )


def _cost_share(run: Usage, transcript: Transcript) -> Callable[[Usage], Usage]:
    """A function giving a phase's tokens their share of the run's cost, by tokens used."""
    all_turns = transcript.turn_usage()
    tokens = all_turns.input_tokens + all_turns.output_tokens
    cost = run.cost_usd

    def share(phase: Usage) -> Usage:
        if cost is None or tokens == 0:
            return phase
        part = (phase.input_tokens + phase.output_tokens) / tokens
        return phase.model_copy(update={"cost_usd": round(cost * part, 6)})

    return share


def _statuses(judgment: Judgment, *, failed: bool) -> dict[int, PhaseStatus]:
    """accepted / rejected / not_reached for each phase.

    A phase that was not accepted counts as ``not_reached`` when the run failed, or when an
    earlier phase was rejected and this one shows no sign of having been attempted.
    """
    statuses: dict[int, PhaseStatus] = {}
    earlier_rejected = False
    for phase in judgment.phases:
        if phase.accepted:
            statuses[phase.index] = "accepted"
        elif failed or (earlier_rejected and not phase.reached):
            statuses[phase.index] = "not_reached"
        else:
            statuses[phase.index] = "rejected"
            earlier_rejected = True
    return statuses
