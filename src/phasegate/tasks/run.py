"""One task run as the agent's observer: what it records, when the gate judges, how it ends.

The session sends the first request, records every entry the agent reports, snapshots the
work directory before the run, at every completion claim, tool check and stop, lets the
:class:`~phasegate.tasks.gate.PhaseGate` judge at each stop and each completion tool call,
and assembles the :class:`~phasegate.tasks.report.RunReport`.

When a session ends with gate feedback it never received (Claude Code ends the session as
soon as a structured output is given, whatever a Stop hook says), the run resumes the session
with that feedback, within the same attempt budget. With ``on_reject: revert`` a run that is
not accepted leaves the work directory as it found it. A recorded run (``recorder``) keeps
each check for its recording and writes the recording when the run ends, however it ends.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from phasegate.agents.observer import ObserverSettings, RunObserver
from phasegate.errors import RunError
from phasegate.evidence.transcript import (
    Entry,
    SandboxBlocked,
    ToolCall,
    ToolRefused,
    ToolResult,
    Transcript,
)
from phasegate.evidence.workspace import WorkspaceTimeline
from phasegate.modes import Mode
from phasegate.phases.checks import has_rubric
from phasegate.phases.completion import COMPLETION_TOOLS
from phasegate.phases.model import Task
from phasegate.prompts.completion_tools import ToolAnswer, definition_characters
from phasegate.prompts.gate_text import task_words
from phasegate.prompts.refusals import refusal_reason
from phasegate.recording.model import RunRecord, issue_records
from phasegate.recording.recorder import Recorder
from phasegate.tasks.assembly import RunFacts, assemble_report, verdict_of
from phasegate.tasks.checks import TaskChecks
from phasegate.tasks.gate import GateDecision, PhaseGate
from phasegate.tasks.progress import PhaseProgress, closing_events, gate_checked
from phasegate.tasks.recorded import check_part, crashed_record, task_record
from phasegate.tasks.report import RunReport
from phasegate.tasks.request import first_request
from phasegate.telemetry.events import (
    AttemptBlocked,
    CallRefused,
    CheckRan,
    EventData,
    GateTrigger,
    RunEvent,
    RunStarted,
    new_run_id,
)
from phasegate.validators.judge import AnswerCheck, Judgment
from phasegate.validators.protect import write_refusal
from phasegate.validators.tool_policy import current_phase, tool_refusal
from phasegate.validators.windows import entry_claims, phase_windows
from phasegate.workspace.checks import CheckDisk
from phasegate.workspace.command_sandbox import CommandSandbox
from phasegate.workspace.observer import WorkspaceObserver
from phasegate.workspace.revert import RevertReport, WorkspaceBackup

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True, kw_only=True)
class RunSettings(ObserverSettings):
    """What a :class:`~phasegate.tasks.runner.Runner` fixes for each run it starts."""

    mode: Mode
    max_attempts: int
    check_answer: AnswerCheck | None = None


class TaskRun(RunObserver):
    """One run of one task: the observer the agent reports to, and the bookkeeping behind
    the report."""

    settings: RunSettings

    def __init__(
        self,
        settings: RunSettings,
        task: Task,
        workdir: Path,
        run_id: str | None = None,
        *,
        recorder: Recorder | None = None,
    ) -> None:
        super().__init__(settings)
        self.task = task
        self.workdir = workdir
        self.run_id = run_id or new_run_id()
        self.recorder = recorder
        self.workspace = WorkspaceObserver(
            workdir,
            unobserved=settings.unobserved,
            contents=recorder.contents if recorder is not None else None,
        )
        self.timeline = WorkspaceTimeline()
        self.check_disk = CheckDisk(self.workspace)
        """Where the gate runs the task's checks; confined once the run knows how."""
        self.gate = PhaseGate(
            task,
            workdir=str(workdir),
            mode=settings.mode,
            max_attempts=settings.max_attempts,
            templates=settings.templates,
            check_answer=settings.check_answer,
            checks=TaskChecks(task, self.check_disk),
        )
        self._checks_told = 0
        """The gate's check runs already told as ``check.ran`` events."""
        self.progress = PhaseProgress(task)
        self.own_words = task_words(task)
        self.started = time.monotonic()
        self.checked_at = -1
        """Entries seen at the latest gate check."""
        self.refused: set[str] = set()
        """Ids of the calls refused before they ran."""

    @property
    def transcript(self) -> Transcript:
        """Every entry recorded so far."""
        return Transcript(entries=tuple(self.entries))

    # -- AgentObserver ------------------------------------------------------------------
    def on_entry(self, entry: Entry) -> None:
        """Record an entry; snapshot the disk when a phase is claimed complete."""
        self.record(entry)
        position = len(self.entries) - 1
        if isinstance(entry, ToolCall):
            self.progress.call_made(entry, position)
        if isinstance(entry, ToolResult):
            if entry.tool_use_id not in self.refused:  # a refused call did not run
                self._emit_all(self.progress.tool_called(entry, self.tool_name(entry), position))
                self.record_blocked(entry)
        elif self.settings.mode != "unstructured":
            claims = entry_claims(self.task, entry, position)
            if claims:
                self.timeline.record(len(self.entries), self.workspace.snapshot())
                windows = phase_windows(self.task, self.transcript)
                self._emit_all(self.progress.claimed(claims, windows))

    async def on_stop(self) -> str | None:
        """The agent wants to stop: judge, and answer with feedback or let it stop."""
        return (await self._judged(self._check_now, "stop")).feedback

    async def _judged(self, judging: Callable[..., _T], *args: Any) -> _T:
        """``judging(*args)``, off the event loop when the task has checks: a check's
        command may run for minutes, and the session's messages must still flow."""
        if not self.gate.checks.any:
            return judging(*args)
        return await self.check_disk.off_loop(judging, *args)

    async def on_tool_call(self, name: str, arguments: dict[str, Any]) -> ToolAnswer:
        """A completion tool was called: judge it now and answer in the structured shape of
        :mod:`phasegate.prompts.completion_tools`, so the model can correct itself at once."""
        self.timeline.record(len(self.entries), self.workspace.snapshot())
        check = await self._judged(
            self.gate.answer_tool, name, arguments, self.transcript, self.timeline
        )
        self._tell_checks()
        if check.judgment is not None:
            self._emit_all(self.progress.calls.judged(check.judgment))
            self._gate_events(check.judgment, self.gate.attempts, "tool", tool=name)
        if self.recorder is not None:
            judgment, called = check.judgment, self.gate.called_phase(name, arguments)
            self.recorder.check(
                part=called - 1 if isinstance(called, int) else check_part(self.task, judgment),
                attempt=self.gate.attempts,
                trigger="tool",
                accepted=check.answer.ok,
                issues=issue_records(judgment.issues if judgment is not None else ()),
                feedback=check.answer.text,
                entry=len(self.entries),
            )
        return check.answer

    def before_tool(self, call: ToolCall) -> str | None:
        """Refuse a call the current phase does not allow (see
        :mod:`phasegate.validators.tool_policy`) or a write to a protected path
        (:mod:`phasegate.validators.protect`), recording the refusal; None lets it run."""
        # The unstructured baseline has no phases to enforce: only the write rules apply.
        unstructured = self.settings.mode == "unstructured"
        refusal = None if unstructured else tool_refusal(self.task, self.entries, call.name)
        if refusal is not None:
            reason, phase = refusal_reason(self.task, refusal), refusal.phase
        else:
            protected = write_refusal(
                call.name, call.input, self.task.protect, str(self.workdir),
                confined=self.task.sandbox is not None and self.task.sandbox.confined,
                own=[str(p) for p in self.confinement.own] if self.confinement else (),
            )  # fmt: skip
            if protected is None:
                return None
            reason, phase = f"Refused: {protected}", current_phase(self.task, self.entries)
        self.refused.add(call.id)
        refused = ToolRefused(
            tool_use_id=call.id, name=call.name, input=call.brief, reason=reason, phase=phase
        )
        self.record(refused)
        self.emit(
            CallRefused(
                phase=phase,
                tool=call.name,
                tool_use_id=call.id,
                input=call.brief,
                reason=reason,
            )
        )
        self.record_blocked(refused)
        return reason

    def restart_after(self, failure: str) -> None:
        """Continue the same session after a transient failure, if there is one to resume."""
        session = self.session_id()
        if session is None or self.request is None:
            return  # nothing to resume: the next attempt starts from the task prompt again
        text = self.settings.templates.render("resume.md", reason=failure)
        self.record_prompt(text)
        self.request = replace(self.request, prompt=text, resume=session)

    def blocked_event(self, entry: SandboxBlocked) -> EventData:
        """``sandbox.blocked`` in the phase current when ``entry`` was recorded."""
        return AttemptBlocked.of(entry, phase=current_phase(self.task, self.entries))

    def run_event(self, data: EventData) -> RunEvent:
        """``data`` as an event of this run."""
        return RunEvent(data, self.run_id, self.task.name, self.settings.mode)

    # -- the run ------------------------------------------------------------------------
    async def run(self) -> RunReport:
        """Run the task to its end and return the report (never raises for a bad run); a
        recorded run is written down whatever happens, a crash included."""
        try:
            report = await self._run()
        except BaseException as exc:
            if self.recorder is not None:
                self.recorder.finish(self._crashed(exc))
            raise
        if self.recorder is not None:
            self.recorder.finish(
                task_record(
                    "task",
                    self.task,
                    report,
                    self.transcript,
                    self.timeline,
                    markers=self.settings.mode != "unstructured",
                )
            )
        return report

    def _crashed(self, error: BaseException) -> RunRecord:
        """What was seen of a run that crashed, with the disk as it is now."""
        with contextlib.suppress(OSError):  # the snapshots taken so far say what they can
            self.timeline.record(len(self.entries), self.workspace.snapshot())
        return crashed_record(
            self.task,
            run_id=self.run_id,
            mode=self.settings.mode,
            transcript=self.transcript,
            timeline=self.timeline,
            attempts=self.gate.phase_attempts,
            error=error,
            markers=self.settings.mode != "unstructured",
        )

    async def _run(self) -> RunReport:
        await self.learn_agent_version()
        await self.confine(self.task.sandbox, self.task.protect, self.workdir)
        self.check_disk.sandbox = CommandSandbox.of(self.sandbox, self.confinement)
        if has_rubric([*self.task.checks, *(c for p in self.task.phases for c in p.checks)]):
            grader = self.grading_agent(self.task.grader)
            if grader is not None:
                self.check_disk.use_grader(grader)
        self.emit(
            RunStarted(
                agent=self.agent.name,
                agent_version=self.agent_version,
                workdir=str(self.workdir),
                phases=len(self.task.phases),
                max_attempts=self.settings.max_attempts,
            )
        )
        backup = self._backup() if self.task.on_reject == "revert" else None
        try:
            self.timeline.record(0, backup.snapshot if backup else self.workspace.snapshot())
            self.emit(self.progress.started())
            settings = self.settings
            self.request = first_request(
                self.task,
                settings.mode,
                settings.templates,
                self.workdir,
                max_attempts=settings.max_attempts,
            )
            self.request = replace(self.request, confinement=self.confinement)
            self.record_prompt(self.request.prompt)
            judgment, error = await self._drive()
            reverted = None
            if backup is not None and verdict_of(judgment, error) != "accepted":
                # The disk as it is, what the checks wrote included: never the agent's work,
                # but a reverted run leaves the directory as it was before the run.
                reverted = backup.restore(self.workspace.disk())
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
            async with self.deadline():
                while True:
                    await self.run_agent()
                    decision = await self._judged(self._decision_at_end)
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
        self.timeline.record(len(self.entries), self.workspace.snapshot())
        return self.gate.judge(self.transcript, self.timeline, run_checks=False), error

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
        self._emit_all(self.progress.calls.judged(decision.judgment))
        self._gate_events(decision.judgment, decision.attempt, trigger)
        if self.recorder is not None:
            self.recorder.check(
                part=check_part(self.task, decision.judgment),
                attempt=decision.attempt,
                trigger=trigger,
                accepted=decision.judgment.accepted,
                issues=issue_records(decision.judgment.issues),
                feedback=decision.feedback,
                entry=len(self.entries),
            )
        if decision.feedback is not None:
            self.record_prompt(decision.feedback)
        return decision

    def _gate_events(
        self, judgment: Judgment, attempt: int, trigger: GateTrigger, tool: str | None = None
    ) -> None:
        self._tell_checks()
        self._emit_all(gate_checked(judgment, attempt, trigger, tool))

    def _tell_checks(self) -> None:
        """A ``check.ran`` event for each check the gate ran since the last ones told."""
        ran = self.gate.checks.ran
        self._emit_all(CheckRan.of(run) for run in ran[self._checks_told :])
        self._checks_told = len(ran)

    def _emit_all(self, events: Iterable[EventData]) -> None:
        """Hand each event to the sink before the next is built."""
        for data in events:
            self.emit(data)

    def _report(
        self, judgment: Judgment, error: str | None, reverted: RevertReport | None
    ) -> RunReport:
        report = assemble_report(
            judgment,
            RunFacts(
                run_id=self.run_id,
                task=self.task.name,
                mode=self.settings.mode,
                agent=self.agent.name,
                agent_version=self.agent_version,
                sandbox=self.sandbox,
                transcript=self.transcript,
                times=self.times,
                attempts=self.gate.attempts,
                phase_attempts=self.gate.phase_attempts,
                duration_ms=int((time.monotonic() - self.started) * 1000),
                retries=self.session_retries,
                api_retries=self.api_retries,
                error=error,
                reverted=reverted,
                gate_text={**self.gate_text, **_tool_answers(self.entries)},
                tool_characters=definition_characters(self.request.tools if self.request else ()),
                check_runs=tuple(self.gate.checks.ran),
            ),
        )
        # The report's windows settle every call whose event is still waiting.
        self._emit_all(self.progress.calls.finished(judgment))
        recording = str(self.recorder.folder) if self.recorder is not None else None
        self._emit_all(closing_events(report, error, recording))
        return report


def _tool_answers(entries: Sequence[Entry]) -> dict[int, int]:
    """The characters of each completion tool's answer, by its position: the gate's text."""
    calls = {e.id for e in entries if isinstance(e, ToolCall) and e.name in COMPLETION_TOOLS}
    return {
        position: len(entry.content)
        for position, entry in enumerate(entries)
        if isinstance(entry, ToolResult) and entry.tool_use_id in calls
    }
