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

from collections.abc import Sequence
from pathlib import Path

from phasegate._files.limits import FileTooLargeError, read_bounded
from phasegate.agents.claude.failures import STRUCTURED_OUTPUT_GAVE_UP, api_failure
from phasegate.errors import ResultOnlyTranscriptError, UsageError
from phasegate.evidence.claude_code_files import written_by_claude_code
from phasegate.evidence.saved_transcript import ReadStats, read_transcript_text
from phasegate.evidence.transcript import RunResult, Transcript
from phasegate.evidence.workspace import WorkspaceDiff, attributed_timeline
from phasegate.phases.model import Task
from phasegate.recording.recorder import Recorder, issue_records
from phasegate.tasks.assembly import RunFacts, assemble_report
from phasegate.tasks.call_phases import CallPhases
from phasegate.tasks.gate import PhaseGate
from phasegate.tasks.progress import closing_events
from phasegate.tasks.recorded import check_part, task_record
from phasegate.tasks.report import RunReport
from phasegate.telemetry.events import EventSink, RunEvent, RunStarted, ToolCalled, new_run_id
from phasegate.validators.judge import Judgment
from phasegate.validators.reconcile import edit_positions
from phasegate.validators.tools import CallRecord, tool_calls
from phasegate.workspace.git import disk_changes_since

SHELL_TOOLS = frozenset({"Bash"})
"""Tools that may change any file: a change no editing tool names is put after the last one."""

MAX_TRANSCRIPT_BYTES = 128 * 1024 * 1024
"""The largest transcript file read (the file is read whole): 128 MiB."""

EXPECTED_SHAPES = (
    "Claude Code stream-json lines (`claude -p --output-format stream-json --verbose`), "
    "a JSON array of those messages (claude-code-action's execution file, `claude -p "
    "--output-format json --verbose`), pretty-printed JSON messages, or a Claude Code "
    "session log (~/.claude/projects/<project>/<session>.jsonl)"
)
"""What a transcript file may hold, as error messages say it."""

MAX_SUBAGENT_FILES = 256
"""The most subagent files read beside a session log (``<session>/subagents/``)."""


def read_transcript(
    path: Path, *, max_bytes: int = MAX_TRANSCRIPT_BYTES
) -> tuple[Transcript, ReadStats]:
    """The transcript saved in ``path``, and how its messages were read.

    A session log's subagent files (``<session>/subagents/agent-*.jsonl`` beside
    ``<session>.jsonl``) are read with it, within the same ``max_bytes`` in all.

    Raises :class:`~phasegate.errors.UsageError` when the file cannot be read, is larger
    than ``max_bytes``, or holds no Claude Code message at all, and
    :class:`~phasegate.errors.ResultOnlyTranscriptError` when it holds a run's result alone.
    """
    data = _read_bytes(path, max_bytes, session=path, max_bytes=max_bytes)
    budget = max_bytes - len(data)
    text = data.decode("utf-8", errors="replace")
    subagents = []
    for file in _subagent_files(path):
        data = _read_bytes(file, budget, session=path, max_bytes=max_bytes)
        budget -= len(data)
        subagents.append(data.decode("utf-8", errors="replace"))
    del data  # only the texts are held while they are read
    parsed = read_transcript_text(text, subagents=subagents)
    del text, subagents  # only the entries are held from here
    stats = parsed.stats
    if stats.results_only:
        raise _result_only(path, parsed.transcript)
    if stats.understood == 0:
        raise UsageError(_nothing_understood(path, stats))
    return parsed.transcript, stats


def _read_bytes(path: Path, budget: int, *, session: Path, max_bytes: int) -> bytes:
    """``path`` (the transcript ``session`` or one of its subagent files), within the
    ``budget`` of bytes the transcript has left of its ``max_bytes``."""
    try:
        data: bytes | None = read_bounded(path, budget)
    except OSError as exc:
        raise UsageError(f"cannot read transcript {path}: {exc.strerror or exc}") from None
    except FileTooLargeError:
        data = None
    if data is None:
        files = " with its subagent files" if path != session else ""
        raise UsageError(
            f"transcript {session}{files} is larger than {max_bytes} bytes, the most a "
            "transcript may have; judge the transcript of a single run (cut the file to it)",
            option="max_bytes",
        )
    return data


def _subagent_files(path: Path) -> list[Path]:
    """The subagent files Claude Code 2.1 keeps beside a session log, in name order."""
    folder = path.with_suffix("") / "subagents"
    if path.suffix != ".jsonl" or not folder.is_dir() or folder.is_symlink():
        return []
    files = sorted(
        file for file in folder.glob("agent-*.jsonl") if file.is_file() and not file.is_symlink()
    )
    return files[:MAX_SUBAGENT_FILES]


def _result_only(path: Path, transcript: Transcript) -> ResultOnlyTranscriptError:
    result = next(e for e in reversed(transcript.entries) if isinstance(e, RunResult))
    cost = result.usage.cost_usd
    figures = ", ".join(
        part
        for part in (
            f"${cost:.6f}" if cost is not None else "",
            f"{result.num_turns} turn(s)" if result.num_turns is not None else "",
            f"{result.duration_ms} ms" if result.duration_ms is not None else "",
        )
        if part
    )
    return ResultOnlyTranscriptError(
        f"{path} holds a run's result ({figures or 'no figures'}) and no messages: nothing "
        "to judge. Keep the run's messages: `claude -p --output-format stream-json "
        "--verbose`, or judge its session log (~/.claude/projects/<project>/<session>.jsonl)",
        cost_usd=cost,
        num_turns=result.num_turns,
        duration_ms=result.duration_ms,
    )


def _nothing_understood(path: Path, stats: ReadStats) -> str:
    """Why a file in which no message was understood is refused, in one line."""
    if stats.shape == "json-array" and stats.ignored == stats.unrecognised == 0:
        return f"{path} is an empty JSON array: no messages to judge; judge reads {EXPECTED_SHAPES}"
    if stats.python_reprs:
        return (
            f"{path} holds Python reprs of claude-agent-sdk messages ({stats.python_reprs} "
            "line(s) such as AssistantMessage(...)), which are not JSON; judge reads "
            f"{EXPECTED_SHAPES}"
        )
    return f"{path} holds no Claude Code messages ({_account(stats)}); expected {EXPECTED_SHAPES}"


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
    calls = tool_calls(transcript)
    positions = edit_positions(calls, recorded)
    shell = [r.position for r in calls if r.ok and r.call.name in SHELL_TOOLS]
    for path in diff.paths:
        if path not in positions and shell:
            positions[path] = shell[-1]
    timeline = attributed_timeline(diff, positions, len(transcript))
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
        called = _call_events(calls, judgment)
        _emit_log(report, on_event, called, workdir=recorded, phases=len(task.phases),
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
    called: Sequence[ToolCalled],
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
