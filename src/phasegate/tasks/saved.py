"""Judging a saved Claude Code transcript against a task, with no agent run.

The transcript is what Claude Code or a CI action kept of a run: stream-json lines (``claude
-p --output-format stream-json --verbose``, with or without partial messages and hook
events), claude-code-action's execution file (a JSON array of the same messages), or Claude
Code's own session log; :mod:`phasegate.evidence.saved_transcript` tells them apart by content.
Tool paths are taken relative to the working directory the transcript records (or the one the
caller states), so a transcript from a CI runner, Windows included, is judged in any checkout
of the same repository. The disk evidence comes from git: what changed in the work directory
since a revision (default ``HEAD``). Lacking snapshots from the run, each change is placed
right after the last tool call that edited the file (or the last shell command, for a change
no editing tool names), which is what per-phase ``require_changes`` needs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from phasegate.agents.claude.failures import STRUCTURED_OUTPUT_GAVE_UP, api_failure
from phasegate.evidence.claude_code_files import written_by_claude_code
from phasegate.evidence.transcript import RunResult, Transcript
from phasegate.evidence.workspace import WorkspaceDiff
from phasegate.phases.model import Task
from phasegate.recording.model import issue_records
from phasegate.recording.recorder import Recorder
from phasegate.tasks.assembly import RunFacts, assemble_report
from phasegate.tasks.call_phases import CallPhases
from phasegate.tasks.checks import TaskChecks
from phasegate.tasks.gate import PhaseGate
from phasegate.tasks.progress import closing_events
from phasegate.tasks.recorded import check_part, task_record
from phasegate.tasks.report import RunReport
from phasegate.tasks.transcript_file import (
    EXPECTED_SHAPES,
    MAX_TRANSCRIPT_BYTES,
    SHELL_TOOLS,
    changes_timeline,
    read_transcript,
)
from phasegate.telemetry.events import (
    CheckRan,
    EventSink,
    RunEvent,
    RunStarted,
    ToolCalled,
    new_run_id,
)
from phasegate.validators.judge import Judgment
from phasegate.validators.tools import CallRecord, tool_calls
from phasegate.workspace.checks import CheckDisk
from phasegate.workspace.git import disk_changes_since
from phasegate.workspace.observer import WorkspaceObserver

__all__ = [
    "EXPECTED_SHAPES",
    "MAX_TRANSCRIPT_BYTES",
    "SHELL_TOOLS",
    "changes_timeline",
    "judge_transcript",
    "read_transcript",
]


def judge_transcript(
    task: Task,
    transcript: Transcript,
    workdir: Path,
    *,
    before: str = "HEAD",
    cwd: str | None = None,
    transcript_file: Path | None = None,
    on_event: EventSink | None = None,
    record: str | Path | None = None,
    run_checks: bool = True,
    check_disk: Callable[[WorkspaceObserver], CheckDisk] = CheckDisk,
) -> RunReport:
    """Judge ``transcript`` against ``task``, with the disk changes in ``workdir`` since
    ``before``; the report has the shape and verdicts of a run's.

    The task's checks run on ``workdir`` as it is now (what they write is never the run's
    work); ``run_checks=False`` judges without running anything, and the report's
    ``checks_skipped`` says so. A task with a ``sandbox`` has them run confined as it
    declares (``on``: not run at all where they cannot be). ``check_disk`` makes what runs
    them from the work directory's observer (the plugin's bounds their time).

    Tool paths are resolved against ``cwd`` when given, else against the working directory
    the transcript records, else against ``workdir`` itself. ``transcript_file``, the file
    the transcript was read from, is not the agent's work when it lies in ``workdir``.
    ``on_event`` receives the events of a run's log: ``run.started``, then each phase's
    ``phase.completed`` and ``run.completed``, as a run would close. ``record``: a folder to
    write the judgment's recording in (kind ``judged``: its parts have no diffs, as no
    snapshots of the run exist); a folder that holds anything but an earlier recording
    raises :class:`~phasegate.errors.RecordingFolderError` before anything is judged.
    """
    recorder = Recorder(record) if record is not None else None
    diff = _without(disk_changes_since(workdir, before), workdir, transcript_file)
    recorded = cwd or transcript.cwd or str(workdir.resolve())
    timeline = changes_timeline(transcript, diff, recorded)
    observer = WorkspaceObserver(workdir, unobserved=[transcript_file] if transcript_file else ())
    disk = check_disk(observer)
    if task.sandbox is not None and task.sandbox.confined:
        # No agent was confined here: the checks' commands are, as the task declares.
        from phasegate.workspace.command_sandbox import CommandSandbox

        disk.sandbox = CommandSandbox.declared(task.sandbox, task.protect)
    checks = TaskChecks(task, disk, skipped=not run_checks)
    gate = PhaseGate(task, workdir=recorded, mode="gate", max_attempts=1, checks=checks)
    decision = gate.check(transcript, timeline)
    judgment = decision.judgment
    results = [e for e in transcript.entries if isinstance(e, RunResult)]
    last = results[-1] if results else None
    error = None
    if last is not None and last.is_error and last.subtype != STRUCTURED_OUTPUT_GAVE_UP:
        error = str(api_failure(last))
    report = assemble_report(
        judgment,
        RunFacts(
            run_id=new_run_id(),
            task=task.name,
            mode="gate",
            agent="transcript",
            transcript=transcript,
            times=(),
            attempts=gate.attempts,
            phase_attempts=gate.phase_attempts,
            duration_ms=sum(r.duration_ms or 0 for r in results),
            retries=0,
            api_retries=0,
            error=error,
            check_runs=tuple(checks.ran),
            checks_skipped=checks.skipped and checks.any,
        ),
    )
    recording = str(recorder.folder) if recorder is not None else None
    if on_event is not None:
        called = _call_events(tool_calls(transcript), judgment)
        ran = [CheckRan.of(run) for run in checks.ran]
        _emit_log(report, on_event, [*called, *ran], workdir=recorded, phases=len(task.phases),
                  recording=recording)  # fmt: skip
    if recorder is not None:
        recorder.check(
            part=check_part(task, judgment),
            attempt=decision.attempt,
            trigger="end",
            accepted=judgment.accepted,
            issues=issue_records(judgment.issues),
            feedback=None,
            entry=len(transcript),
        )
        recorder.write(task_record("judged", task, report, transcript, None))
    return report


def _call_events(calls: Sequence[CallRecord], judgment: Judgment) -> list[ToolCalled]:
    """The ``tool.called`` events of the judged calls, each under the phase the report counts
    it in (a call after the last phase's window under the last phase, as a run logs it)."""
    phases = CallPhases()
    last = max((phase.index for phase in judgment.phases), default=1)
    events: list[ToolCalled] = []
    for record in calls:
        phases.made(record.call, record.position, last)
        if record.result is not None:
            events.extend(phases.returned(record.result, record.call.name, record.position, last))
    events.extend(phases.finished(judgment))
    return events


def _emit_log(
    report: RunReport,
    on_event: EventSink,
    called: Sequence[ToolCalled | CheckRan],
    *,
    workdir: str,
    phases: int,
    recording: str | None,
) -> None:
    """The events a run of ``report`` would have logged (its tool calls, then the events it
    closes with), so judged runs can be logged and aggregated alongside real ones: their
    tool errors (and their subagents' among them) counted like a run's."""
    started = RunStarted(agent=report.agent, workdir=workdir, phases=phases, max_attempts=1)
    for data in (started, *called, *closing_events(report, report.error, recording)):
        # Logged as judged, not as a gate run: no gate ran, and report keeps them apart.
        on_event(RunEvent(data, report.run_id, report.task, "judge"))


def _without(diff: WorkspaceDiff, workdir: Path, file: Path | None) -> WorkspaceDiff:
    """``diff`` without ``file`` (a path relative to ``workdir`` in git's answer) and
    without the files Claude Code wrote for itself there (its plans, session logs...)."""
    own: str | None = None
    if file is not None:
        try:
            own = file.resolve().relative_to(workdir.resolve()).as_posix()
        except ValueError:  # not in the work directory
            own = None

    def work(path: str) -> bool:
        return path != own and not written_by_claude_code(path)

    return WorkspaceDiff(
        added=tuple(filter(work, diff.added)),
        modified=tuple(filter(work, diff.modified)),
        deleted=tuple(filter(work, diff.deleted)),
    )
