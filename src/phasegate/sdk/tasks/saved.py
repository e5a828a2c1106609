"""Judging a saved Claude Code transcript against a task, with no agent run.

The transcript is stream-json, as written by ``claude -p --output-format stream-json
--verbose`` or kept by CI actions as an execution log. Tool paths are taken relative to the
working directory the transcript records, so a transcript from a CI runner is judged in any
checkout of the same repository. The disk evidence comes from git: what changed in the work
directory since a revision (default ``HEAD``). Lacking snapshots from the run, each change is
placed right after the last tool call that edited the file (or the last shell command, for a
change no editing tool names), which is what per-phase ``require_changes`` needs.
"""

from __future__ import annotations

from pathlib import Path

from phasegate.errors import UsageError
from phasegate.evidence.stream_json import parse_stream_json
from phasegate.evidence.transcript import RunResult, Transcript
from phasegate.evidence.workspace import attributed_timeline
from phasegate.phases.model import Task
from phasegate.sdk.agents.claude.failures import STRUCTURED_OUTPUT_GAVE_UP, api_failure
from phasegate.sdk.tasks.assembly import RunFacts, assemble_report
from phasegate.sdk.tasks.gate import PhaseGate
from phasegate.sdk.tasks.report import RunReport
from phasegate.sdk.workspace.git import disk_changes_since
from phasegate.validators.reconcile import edit_positions
from phasegate.validators.tools import tool_calls

SHELL_TOOLS = frozenset({"Bash"})
"""Tools that may change any file: a change no editing tool names is put after the last one."""


def read_transcript(path: Path) -> tuple[Transcript, int]:
    """The transcript in a stream-json file, and how many of its lines were skipped."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise UsageError(f"cannot read transcript {path}: {exc.strerror or exc}") from None
    parsed = parse_stream_json(text.splitlines())
    if not parsed.transcript.entries:
        raise UsageError(
            f"{path} holds no Claude Code messages ({parsed.skipped_lines} line(s) skipped); "
            "expected stream-json lines as written by `claude -p --output-format stream-json "
            "--verbose`"
        )
    return parsed.transcript, parsed.skipped_lines


def judge_transcript(
    task: Task, transcript: Transcript, workdir: Path, *, before: str = "HEAD"
) -> RunReport:
    """Judge ``transcript`` against ``task``, with the disk changes in ``workdir`` since
    ``before``; the report has the shape and verdicts of a run's."""
    diff = disk_changes_since(workdir, before)
    recorded = transcript.cwd or str(workdir.resolve())
    calls = tool_calls(transcript)
    positions = edit_positions(calls, recorded)
    shell = [r.position for r in calls if r.ok and r.call.name in SHELL_TOOLS]
    for path in diff.paths:
        if path not in positions and shell:
            positions[path] = shell[-1]
    timeline = attributed_timeline(diff, positions, len(transcript))
    gate = PhaseGate(task, workdir=recorded, mode="gate", max_attempts=1)
    judgment = gate.check(transcript, timeline).judgment
    results = [e for e in transcript.entries if isinstance(e, RunResult)]
    last = results[-1] if results else None
    error = None
    if last is not None and last.is_error and last.subtype != STRUCTURED_OUTPUT_GAVE_UP:
        error = str(api_failure(last))
    return assemble_report(
        judgment,
        RunFacts(
            run_id="saved",
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
