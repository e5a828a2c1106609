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

from pathlib import Path

from phasegate._files.limits import FileTooLargeError, read_bounded
from phasegate.agents.claude.failures import STRUCTURED_OUTPUT_GAVE_UP, api_failure
from phasegate.errors import UsageError
from phasegate.evidence.saved_transcript import ReadStats, read_transcript_text
from phasegate.evidence.transcript import RunResult, Transcript
from phasegate.evidence.workspace import WorkspaceDiff, WorkspaceTimeline, attributed_timeline
from phasegate.phases.model import Task
from phasegate.recording.recorder import Recorder, issue_records
from phasegate.tasks.assembly import RunFacts, assemble_report
from phasegate.tasks.gate import PhaseGate
from phasegate.tasks.progress import closing_events
from phasegate.tasks.recorded import check_part, task_record
from phasegate.tasks.report import RunReport
from phasegate.telemetry.events import EventSink, RunEvent, RunStarted, new_run_id
from phasegate.validators.reconcile import edit_positions
from phasegate.validators.tools import tool_calls
from phasegate.workspace.git import disk_changes_since

SHELL_TOOLS = frozenset({"Bash"})
"""Tools that may change any file: a change no editing tool names is put after the last one."""

MAX_TRANSCRIPT_BYTES = 128 * 1024 * 1024
"""The largest transcript file read (the file is read whole): 128 MiB."""

EXPECTED_SHAPES = (
    "Claude Code stream-json lines (`claude -p --output-format stream-json --verbose`), "
    "a JSON array of those messages (claude-code-action's execution file), or a Claude Code "
    "session log (~/.claude/projects/<project>/<session>.jsonl)"
)
"""What a transcript file may hold, as error messages say it."""


def read_transcript(
    path: Path, *, max_bytes: int = MAX_TRANSCRIPT_BYTES
) -> tuple[Transcript, ReadStats]:
    """The transcript saved in ``path``, and how its messages were read.

    Raises :class:`~phasegate.errors.UsageError` when the file cannot be read, is larger
    than ``max_bytes``, or holds no Claude Code message at all.
    """
    try:
        data: bytes | None = read_bounded(path, max_bytes)
    except OSError as exc:
        raise UsageError(f"cannot read transcript {path}: {exc.strerror or exc}") from None
    except FileTooLargeError:
        data = None
    if data is None:
        raise UsageError(
            f"transcript {path} is larger than {max_bytes} bytes, the most a transcript may "
            "have; judge the transcript of a single run (cut the file to it)",
            option="max_bytes",
        )
    text = data.decode("utf-8", errors="replace")
    del data  # only the text is held while it is read
    parsed = read_transcript_text(text)
    stats = parsed.stats
    if stats.understood == 0:
        raise UsageError(
            f"{path} holds no Claude Code messages ({_account(stats)}); expected {EXPECTED_SHAPES}"
        )
    return parsed.transcript, stats


def _account(stats: ReadStats) -> str:
    """What was found instead of messages, in a few words."""
    found = [
        f"{stats.not_json} line(s) that are not JSON" if stats.not_json else "",
        f"{stats.unrecognised} other JSON value(s)" if stats.unrecognised else "",
        f"{stats.ignored} line(s) with nothing to judge" if stats.ignored else "",
    ]
    found = [part for part in found if part]
    where = "line" if stats.shape == "json-lines" else "element"
    example = f", e.g. {where} {stats.example_at}: {stats.example}" if stats.example else ""
    return (", ".join(found) or "it is empty") + example


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
) -> RunReport:
    """Judge ``transcript`` against ``task``, with the disk changes in ``workdir`` since
    ``before``; the report has the shape and verdicts of a run's.

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
    gate = PhaseGate(task, workdir=recorded, mode="gate", max_attempts=1)
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
        ),
    )
    recording = str(recorder.folder) if recorder is not None else None
    if on_event is not None:
        _emit_log(report, on_event, workdir=recorded, phases=len(task.phases), recording=recording)
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


def changes_timeline(transcript: Transcript, diff: WorkspaceDiff, cwd: str) -> WorkspaceTimeline:
    """A timeline for ``transcript`` from one before/after ``diff`` of the work directory
    ``cwd``: each change right after the last successful call that edited the file, else
    after the last shell command, else at the end (what per-phase ``require_changes``
    needs when no snapshots were taken during the run)."""
    calls = tool_calls(transcript)
    positions = edit_positions(calls, cwd)
    shell = [r.position for r in calls if r.ok and r.call.name in SHELL_TOOLS]
    for path in diff.paths:
        if path not in positions and shell:
            positions[path] = shell[-1]
    return attributed_timeline(diff, positions, len(transcript))


def _emit_log(
    report: RunReport, on_event: EventSink, *, workdir: str, phases: int, recording: str | None
) -> None:
    """The events a run of ``report`` would have closed with, so judged runs can be logged
    and aggregated alongside real ones."""
    started = RunStarted(agent=report.agent, workdir=workdir, phases=phases, max_attempts=1)
    for data in (started, *closing_events(report, report.error, recording)):
        # Logged as judged, not as a gate run: no gate ran, and report keeps them apart.
        on_event(RunEvent(data, report.run_id, report.task, "judge"))


def _without(diff: WorkspaceDiff, workdir: Path, file: Path | None) -> WorkspaceDiff:
    """``diff`` without ``file`` (a path relative to ``workdir`` in git's answer)."""
    if file is None:
        return diff
    try:
        own = file.resolve().relative_to(workdir.resolve()).as_posix()
    except ValueError:  # not in the work directory
        return diff
    return WorkspaceDiff(
        added=tuple(p for p in diff.added if p != own),
        modified=tuple(p for p in diff.modified if p != own),
        deleted=tuple(p for p in diff.deleted if p != own),
    )
