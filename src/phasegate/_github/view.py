"""Any phasegate report, seen the way a CI step shows it.

A task run and a judged transcript write a :class:`RunReport` (phases, issues, findings); a
pipeline writes a :class:`PipelineReport` (stages and their exit checks). :class:`ReportView`
is what the outputs, the summary and the annotations need from either, so each of them is
written once; another kind of report only needs another reader here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from phasegate._github.report_file import field_location, one_line, read_json_object
from phasegate.errors import _FileFieldError
from phasegate.evidence.confinement import Blocked
from phasegate.evidence.overhead import GateOverhead
from phasegate.evidence.transcript import Usage
from phasegate.modes import STEP_NOUN, DefinitionKind, ReportVerdict, StepStatus
from phasegate.phases.sandbox import SandboxOutcome
from phasegate.pipelines.report import PipelineReport
from phasegate.tasks.report import (
    CheckReport,
    CriterionReport,
    DefinitionReport,
    PhaseReport,
    RunReport,
    StepReport,
)
from phasegate.validators.issues import Issue
from phasegate.validators.reconcile import FileReconciliation


@dataclass(frozen=True, slots=True)
class Row:
    """One phase of a task, or one stage of a pipeline."""

    index: int
    name: str
    status: StepStatus
    attempts: int
    how: str
    """How it completed (a phase) or how many visits it took (a stage), in a few words."""
    files_changed: tuple[str, ...]
    usage: Usage = field(default_factory=Usage)
    """The agent's tokens and cost in it."""
    grader_usage: Usage = field(default_factory=Usage)
    """Its grader sessions' (zero when no grader judged its checks)."""


@dataclass(frozen=True, slots=True)
class Problem:
    """An issue, a finding or a failed exit check, with where it happened."""

    code: str
    message: str
    where: str
    requirement: str | None = None
    path: str | None = None
    """The file it is about, relative to the work directory."""
    finding: bool = False
    """Reported, not judged (a reconciliation difference, a read outside the work directory)."""


@dataclass(frozen=True, slots=True)
class RefusedLine:
    """A tool call refused before it ran, with the phase that was current."""

    where: str
    tool: str
    input: str
    reason: str


@dataclass(frozen=True, slots=True)
class SubagentLine:
    """What one subagent did in a phase: its calls, errors and files in a few words."""

    where: str
    agent: str
    """Its type and id (``general-purpose a3f9c21``)."""
    work: str


@dataclass(frozen=True, slots=True)
class CheckLine:
    """One check of a task as the gate last ran it, with the phase it belongs to."""

    where: str
    """``phase 1 (fix)``, or ``task`` for the task's own checks."""
    kind: str
    description: str
    passed: bool
    exit_code: int | None
    duration_ms: int
    run: int
    """The gate's judgment that ran it (1 = its first)."""
    output: str
    """What was found: for a command, its exit status and the end of its output."""


@dataclass(frozen=True, slots=True)
class VerdictsLine:
    """A rubric check a grader judged, with its verdict on each criterion, and where it is."""

    where: str
    """``phase 1 (fix)``, ``task`` or ``stage 2 (build)``."""
    description: str
    criteria: tuple[CriterionReport, ...]


@dataclass(frozen=True, slots=True)
class ReportView:
    """What a CI step shows of a report."""

    kind: DefinitionKind
    name: str
    verdict: ReportVerdict
    exit_code: int
    rows: tuple[Row, ...] = ()
    problems: tuple[Problem, ...] = ()
    refusals: tuple[RefusedLine, ...] = ()
    subagents: tuple[SubagentLine, ...] = ()
    """The part of each phase's work its subagents did (the rest is the main agent's)."""
    reconciliation: FileReconciliation | None = None
    usage: Usage = field(default_factory=Usage)
    grader_usage: Usage = field(default_factory=Usage)
    """The grader sessions' tokens and cost: the rows' ``grader_usage`` added."""
    unattributed_usage: Usage = field(default_factory=Usage)
    """Tokens and cost no row owns: ``usage`` is the rows' ``usage`` and ``grader_usage``
    plus this."""
    overhead: GateOverhead = field(default_factory=GateOverhead)
    """The input the run's requests carried, and the gate's share of it."""
    duration_ms: int = 0
    session_id: str | None = None
    final_message: str | None = None
    summary_json: dict[str, Any] | None = None
    mode: str | None = None
    error: str | None = None
    sandbox: SandboxOutcome | None = None
    blocked: tuple[Blocked, ...] = ()
    checks: tuple[CheckLine, ...] = ()
    """A task's checks as the gate last ran them: each phase's, then the task's own."""
    check_ms: int = 0
    """The time the gate spent running checks, every run counted (part of ``duration_ms``)."""
    checks_skipped: bool = False
    """The task has checks and none was run, as the caller asked (``judge --no-checks``)."""
    verdicts: tuple[VerdictsLine, ...] = ()
    """Each rubric a grader judged, as it last ran: a task's checks, a pipeline's stages'."""

    @property
    def unit(self) -> str:
        """What a row is: ``phase`` or ``stage``."""
        return STEP_NOUN[self.kind]

    def count(self, status: str) -> int:
        """How many rows ended with ``status``."""
        return sum(1 for row in self.rows if row.status == status)

    @property
    def issue_codes(self) -> list[str]:
        """Codes of what was judged wrong (findings left out), each once, in order."""
        return list(dict.fromkeys(p.code for p in self.problems if not p.finding))


def read_report_view(path: Path, *, exit_code: int | None = None) -> ReportView:
    """The report in ``path``. A missing or empty file is an ``error`` view when the exit code
    of the command that should have written it is given (it stopped before it could);
    without one there is nothing to show, and it is a usage error naming the file, as is a
    file that is not a phasegate report (naming the field)."""
    parsed = read_json_object(path)
    if parsed is None and exit_code is None:
        raise _FileFieldError(
            path, None,
            "no report here (the file is missing or empty); name the report a run wrote, or "
            "give the exit code of the command that should have written it",
            option="exit_code",
        )  # fmt: skip
    if parsed is None:
        assert exit_code is not None
        return _no_report(path, exit_code)
    try:
        if "phases" in parsed:
            task = RunReport.model_validate(parsed)
            return _agreed(_task_view(task, task.exit_code if exit_code is None else exit_code))
        if "stages" in parsed:
            pipeline = PipelineReport.model_validate(parsed)
            code = pipeline.exit_code if exit_code is None else exit_code
            return _agreed(_pipeline_view(pipeline, code))
    except ValidationError as exc:
        error = exc.errors()[0]
        problem = f"{one_line(error['msg'])}: not a phasegate report"
        raise _FileFieldError(path, field_location(error["loc"]), problem) from None
    raise _FileFieldError(
        path,
        None,
        "not a phasegate report: it has neither phases (a task run or judge report) nor "
        "stages (a pipeline report)",
    )


def _agreed(view: ReportView) -> ReportView:
    """``view``, or an ``error`` view of it when the command's exit code and the report's
    verdict disagree on success (exit 0 with a report that is not accepted, or a failing code
    with an accepted one): the outputs would say accepted and a failing code at once."""
    if (view.exit_code == 0) == (view.verdict == "accepted"):
        return view
    said = (
        f"phasegate exited {view.exit_code}, but its report says {view.verdict}; one of them "
        "is not this run's: its own message is in the step log above"
    )
    return replace(
        view, verdict="error", error=said if view.error is None else f"{said}; {view.error}"
    )


def _no_report(path: Path, code: int) -> ReportView:
    return ReportView(
        kind="task",
        name=path.name,
        verdict="error",
        exit_code=code,
        error=f"phasegate exited {code} before it wrote a report; its own message is in the "
        "step log above",
    )


def _view(
    report: DefinitionReport,
    exit_code: int,
    problems: list[Problem],
    how: Mapping[int, str],
    **only_tasks: Any,
) -> ReportView:
    """What every report shows alike; ``how`` says per step index how it completed,
    ``only_tasks`` the fields a pipeline report does not have."""
    return ReportView(
        kind=report.kind,
        name=report.name,
        verdict=report.verdict,
        exit_code=exit_code,
        rows=tuple(_row(step, how.get(step.index, "")) for step in report.steps),
        problems=tuple(problems),
        usage=report.usage,
        grader_usage=report.grader_usage,
        unattributed_usage=report.unattributed_usage,
        overhead=report.overhead,
        duration_ms=report.duration_ms,
        session_id=report.session_id,
        final_message=report.final_message,
        error=report.error,
        sandbox=report.sandbox,
        blocked=report.blocked,
        **only_tasks,
    )


def _row(step: StepReport, how: str) -> Row:
    return Row(
        step.index,
        step.name,
        step.status,
        step.attempts,
        how,
        tuple(step.files_changed),
        step.usage,
        step.grader_usage,
    )


def _task_view(report: RunReport, exit_code: int) -> ReportView:
    names = {phase.index: phase.name for phase in report.phases}
    problems = [_problem(issue, names) for issue in report.issues]
    problems += [_problem(finding, names, finding=True) for finding in report.findings]
    how = {p.index: _completion(p) for p in report.phases if p.completed_by}
    refusals = tuple(
        RefusedLine(f"phase {p.index} ({p.name})", r.tool, r.input, r.reason)
        for p in report.phases
        for r in p.refusals
    )
    subagents = tuple(
        SubagentLine(f"phase {p.index} ({p.name})", w.label, w.summary)
        for p in report.phases
        for w in p.subagents
    )
    owned = [(f"phase {p.index} ({p.name})", check) for p in report.phases for check in p.checks]
    owned += [("task", check) for check in report.checks]
    checks = tuple(_check_line(where, check) for where, check in owned)
    verdicts = tuple(
        VerdictsLine(where, check.description, tuple(check.criteria))
        for where, check in owned
        if check.criteria
    )
    return _view(report, exit_code, problems, how, reconciliation=report.reconciliation,
                 summary_json=report.summary, mode=report.mode, refusals=refusals,
                 subagents=subagents, checks=checks, check_ms=report.check_ms,
                 checks_skipped=report.checks_skipped, verdicts=verdicts)  # fmt: skip


def _check_line(where: str, check: CheckReport) -> CheckLine:
    return CheckLine(
        where=where,
        kind=check.kind,
        description=check.description,
        passed=check.passed,
        exit_code=check.exit_code,
        duration_ms=check.duration_ms,
        run=check.run,
        output=check.detail,
    )


def _completion(phase: PhaseReport) -> str:
    """How a phase completed (``by marker``); a phase the gate did not accept was only
    claimed complete that way (``claimed by marker``): it did not complete."""
    said = f"by {phase.completed_by}"
    return said if phase.status == "accepted" else f"claimed {said}"


def _problem(issue: Issue, names: dict[int, str], *, finding: bool = False) -> Problem:
    where = f"phase {issue.phase} ({names.get(issue.phase, '?')})" if issue.phase else "run"
    return Problem(
        code=issue.code.value,
        message=issue.message,
        where=where,
        requirement=issue.requirement,
        path=issue.path,
        finding=finding,
    )


def _pipeline_view(report: PipelineReport, exit_code: int) -> ReportView:
    problems = [
        Problem(
            code=check.kind,
            message=f"{check.description}: {check.detail}" if check.detail else check.description,
            where=f"stage {stage.index} ({stage.name})",
            requirement=check.description,
        )
        for stage in report.stages
        for check in stage.checks
        if not check.ok
    ]
    how = {stage.index: f"{stage.visits} visits" for stage in report.stages if stage.visits > 1}
    subagents = tuple(
        SubagentLine(f"stage {stage.index} ({stage.name})", w.label, w.summary)
        for stage in report.stages
        for w in stage.subagents
    )
    verdicts = tuple(
        VerdictsLine(f"stage {stage.index} ({stage.name})", check.description,
                     tuple(check.criteria))
        for stage in report.stages
        for check in stage.checks
        if check.criteria
    )  # fmt: skip
    return _view(report, exit_code, problems, how, subagents=subagents, verdicts=verdicts)
