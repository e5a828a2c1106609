"""A pipeline run (or a Ralph loop) as its recording sees it: each stage visit one part.

:class:`VisitLog` notes each visit as it begins (its stage, its number, the transcript
position and the work directory then) and each stage check on the visit it judged. When the
run ends it makes the parts: a visit owns the entries from its start to the next visit's, its
diff runs from its baseline to the next visit's (or to the disk at the end), and its tokens
and cost are the run's responses split among the visits by the rule that splits them among
the stages (:func:`~phasegate.evidence.usage_split.split_usage`), so the visits of a stage
seen once in this process add up to that stage. A visit's status is what its last check
said (``accepted`` or ``rejected``), or the stage's status when it was never checked.

A pipeline whose stages run in branches records each branch part the same way, with a
recorder of its own (:meth:`~phasegate.recording.recorder.Recorder.branch`);
:func:`parallel_record` puts the parts' records together into the run's.
"""

from __future__ import annotations

import bisect
import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from phasegate.evidence.transcript import Entry, Transcript, Usage
from phasegate.evidence.usage_split import split_usage
from phasegate.evidence.workspace import WorkspaceSnapshot
from phasegate.pipelines.machine import Checked
from phasegate.pipelines.report import PipelineReport
from phasegate.pipelines.visit import StageCheck
from phasegate.recording.model import (
    CheckRecord,
    IssueRecord,
    PartRecord,
    RecordingKind,
    RunRecord,
    issue_records,
)
from phasegate.recording.recorder import Recorder


@dataclass(slots=True)
class _Visit:
    stage: int
    name: str
    visit: int
    start: int
    baseline: WorkspaceSnapshot | None
    started: float = field(default_factory=time.monotonic)
    checks: int = 0
    passed: bool | None = None


class VisitLog:
    """The visits of a recorded pipeline run and the checks on each, for ``recorder``."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self.visits: list[_Visit] = []

    def begin(
        self, stage: int, name: str, visit: int, at: int, baseline: WorkspaceSnapshot | None
    ) -> None:
        """Stage ``stage`` (0-based) begins its visit ``visit`` at transcript position
        ``at``, with the work directory as ``baseline``."""
        self.visits.append(_Visit(stage, name, visit, at, baseline))

    @property
    def current(self) -> int:
        """The position of the current visit among the parts."""
        return len(self.visits) - 1

    def checked(
        self, part: int, check: StageCheck, attempt: int, trigger: str, result: Checked
    ) -> None:
        """Visit ``part`` was checked: ``result`` says what the agent got next (whatever
        visit it opened)."""
        visit = self.visits[part]
        visit.checks += 1
        visit.passed = check.passed
        issues = [
            IssueRecord(code=outcome.kind, phase=None, message=outcome.detail)
            for outcome in check.outcomes
            if not outcome.ok and outcome.kind != "task"
        ]
        self.recorder.check(
            part=part,
            attempt=attempt,
            trigger="end" if trigger == "end" else "stop",
            accepted=check.passed,
            issues=(*issues, *issue_records(check.task_issues)),
            feedback=result.text if result.outcome != "over" else None,
            entry=result.at,
        )

    def record(
        self,
        kind: RecordingKind,
        report: PipelineReport,
        transcript: Transcript,
        final: WorkspaceSnapshot | None,
        *,
        error: str | None = None,
    ) -> RunRecord:
        """The recording of the run that ended with ``report`` (``final``: the work
        directory at its end)."""
        starts = [visit.start for visit in self.visits]
        length = len(transcript)

        def owner(position: int) -> int | None:
            at = bisect.bisect_right(starts, position) - 1
            return at if at >= 0 else None

        split = split_usage(transcript, owner, len(self.visits))
        parts = []
        now = time.monotonic()
        for number, (visit, usage) in enumerate(zip(self.visits, split.parts, strict=True)):
            following = self.visits[number + 1] if number + 1 < len(self.visits) else None
            stage, start = report.stages[visit.stage], visit.started
            status = {True: "accepted", False: "rejected", None: stage.status}[visit.passed]
            parts.append(
                PartRecord(
                    kind="stage",
                    index=stage.index,  # in the whole pipeline (a branch part's too)
                    name=visit.name,
                    visit=visit.visit,
                    status=status,
                    attempts=visit.checks,
                    start=visit.start,
                    end=following.start if following is not None else length,
                    usage=usage,
                    duration_ms=int(((following.started if following else now) - start) * 1000),
                    before=visit.baseline,
                    after=following.baseline if following is not None else final,
                )
            )
        return RunRecord(
            kind=kind,
            name=report.pipeline,
            run_id=report.run_id,
            verdict=report.verdict,
            mode="gate",
            report_json=report.model_dump_json(indent=2) if error is None else None,
            transcript=transcript,
            parts=tuple(parts),
            # A crashed run's report has not added this process's usage yet: its own total.
            total=report.usage if error is None else split.total,
            grader=report.grader_usage if error is None else Usage(),
            error=error,
        )


def parallel_record(report: PipelineReport, branches: Sequence[RunRecord]) -> RunRecord:
    """The recording of a parallel pipeline run that ended with ``report``, from the records
    of the branch parts that ran in this process (``branches``, in the order they started).

    Their transcripts are laid end to end, each part's entries and each check's part and
    entry moved along by what comes before them, so every stage visit keeps its
    conversation, checks and diff (made in its own work directory) as a sequential run's
    does. A stage that ran only in an earlier process (the run was resumed) comes first, as a
    part with no entries, the tokens and cost the report gives it, and a note that this
    process did not see its transcript or diff. The total is the report's, plus what a part
    that crashed spent (its report had not counted it yet).
    """
    seen = {part.index for record in branches for part in record.parts}
    earlier = [
        PartRecord(
            kind="stage",
            index=stage.index,
            name=stage.name,
            visit=stage.visits,
            status=stage.status,
            attempts=stage.attempts,
            start=0,
            end=0,
            usage=stage.usage,
            duration_ms=stage.duration_ms,
            no_diff=f"Stage {stage.name} ran in a process before this one (the run was "
            "resumed): its transcript and diff were not seen by this recording.",
        )
        for stage in report.stages
        if stage.visits and stage.index not in seen
    ]
    entries: list[Entry] = []
    parts: list[PartRecord] = list(earlier)
    checks: list[CheckRecord] = []
    total = report.usage
    for record in branches:
        shift, first = len(entries), len(parts)
        entries.extend(record.transcript.entries)
        parts.extend(
            dataclasses.replace(part, start=part.start + shift, end=part.end + shift)
            for part in record.parts
        )
        checks.extend(
            dataclasses.replace(check, part=check.part + first, entry=check.entry + shift)
            for check in record.checks
        )
        if record.error is not None:
            total = total + record.total
    return RunRecord(
        kind="pipeline",
        name=report.pipeline,
        run_id=report.run_id,
        verdict=report.verdict,
        mode="gate",
        report_json=report.model_dump_json(indent=2),
        transcript=Transcript(entries=tuple(entries)),
        parts=tuple(parts),
        total=total,
        grader=report.grader_usage,
        checks=tuple(checks),
    )
