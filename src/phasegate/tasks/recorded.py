"""A task run (or a judged transcript) as its recording sees it: the phases as parts, each
gate check on the part it is about.

Each phase is one part: the entries of its window (the judge's, from
:func:`~phasegate.validators.windows.phase_windows`), its figures copied from the report's
phase, and the work directory at the window's start and end from the run's timeline (the
snapshots the judge compares).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from phasegate.evidence.transcript import Transcript, Usage
from phasegate.evidence.workspace import WorkspaceTimeline
from phasegate.phases.model import Task
from phasegate.recording.model import PartRecord, RecordingKind, RunRecord
from phasegate.validators.judge import Judgment
from phasegate.validators.windows import PhaseWindow, phase_windows

if TYPE_CHECKING:
    from phasegate.tasks.report import RunReport

NO_WORK_DIRECTORY = (
    "A judged transcript has no snapshots of the work directory, so no part has a diff."
)
"""The ``diff_note`` of every part of a judged transcript."""


def task_record(
    kind: RecordingKind,
    task: Task,
    report: RunReport,
    transcript: Transcript,
    timeline: WorkspaceTimeline | None,
    *,
    markers: bool = True,
) -> RunRecord:
    """The recording of a task run or judged transcript that ended with ``report``
    (``timeline``: the run's snapshots; None for a judged transcript)."""
    windows = phase_windows(task, transcript, markers=markers)
    parts = tuple(
        _part(window, timeline, phase.status, phase.attempts, phase.usage, phase.duration_ms)
        for window, phase in zip(windows, report.phases, strict=True)
    )
    return RunRecord(
        kind=kind,
        name=report.task,
        run_id=report.run_id,
        verdict=report.verdict,
        mode=report.mode,
        report_json=report.model_dump_json(indent=2),
        transcript=transcript,
        parts=parts,
        total=report.usage,
        grader=report.grader_usage,
    )


def crashed_record(
    task: Task,
    *,
    run_id: str,
    mode: str,
    transcript: Transcript,
    timeline: WorkspaceTimeline,
    attempts: Callable[[int], int],
    error: BaseException,
    markers: bool = True,
) -> RunRecord:
    """The recording of a task run that crashed before it had a report: what was seen, the
    phases' windows and diffs, no figures."""
    parts = tuple(
        _part(window, timeline, "error", attempts(window.index), Usage(), 0)
        for window in phase_windows(task, transcript, markers=markers)
    )
    return RunRecord(
        kind="task",
        name=task.name,
        run_id=run_id,
        verdict="error",
        mode=mode,
        report_json=None,
        transcript=transcript,
        parts=parts,
        total=Usage(),
        error=f"{type(error).__name__}: {error}",
    )


def _part(
    window: PhaseWindow,
    timeline: WorkspaceTimeline | None,
    status: str,
    attempts: int,
    usage: Usage,
    duration_ms: int,
) -> PartRecord:
    """Phase ``window`` as a part, with the disk at its start and end (``timeline`` None:
    a judged transcript, which has none)."""
    around = timeline.around(window.start, window.end) if timeline is not None else None
    return PartRecord(
        kind="phase",
        index=window.index,
        name=window.phase.name,
        visit=None,
        status=status,
        attempts=attempts,
        start=window.start,
        end=window.end,
        usage=usage,
        duration_ms=duration_ms,
        before=around[0] if around else None,
        after=around[1] if around else None,
        no_diff=NO_WORK_DIRECTORY if timeline is None else None,
    )


def check_part(task: Task, judgment: Judgment | None) -> int:
    """The part (0-based) a gate check is about: the first phase it did not accept, else
    the last phase."""
    if judgment is not None:
        for phase in judgment.phases:
            if not phase.accepted:
                return phase.index - 1
    return len(task.phases) - 1
