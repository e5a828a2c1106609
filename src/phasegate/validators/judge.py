"""Judging a whole transcript against a task: every rule, every phase, one pure function.

:func:`judge` is what a gate calls each time the agent tries to stop. It is stateless: it
looks at the transcript so far and the workspace timeline, and re-derives every phase's
verdict, so a phase fixed after feedback is judged on the latest evidence.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from phasegate.evidence.transcript import Transcript
from phasegate.evidence.workspace import WorkspaceDiff, WorkspaceTimeline
from phasegate.phases.model import Task
from phasegate.validators.check_runs import CheckRun
from phasegate.validators.issues import Issue, IssueCode
from phasegate.validators.output import (
    check_claims,
    check_placeholders,
    check_runtime_rejection,
    check_schema,
    check_wrapped,
    claimed_files,
)
from phasegate.validators.paths import check_paths_inside, find_reads_outside
from phasegate.validators.protect import names_ignore_case, protected_changes, protected_issues
from phasegate.validators.reconcile import (
    FileReconciliation,
    Spelling,
    disk_spelling,
    reconcile,
    tool_reported_paths,
)
from phasegate.validators.subagents import SubagentWork, subagent_work
from phasegate.validators.summary import SummaryCandidate, check_summary_present, summary_value
from phasegate.validators.tool_policy import policy_issues
from phasegate.validators.tools import CallRecord, tool_calls
from phasegate.validators.windows import PhaseWindow, phase_windows
from phasegate.validators.work import (
    check_changes,
    check_marker,
    check_order,
    check_read_only,
    check_required_tools,
    find_late_work,
)

AnswerCheck = Callable[[dict[str, Any]], Sequence[str]]
"""Reviews the output phase's JSON once it fits the schema: each returned sentence is an
``answer_refused`` issue (none: the answer is accepted)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PhaseJudgment:
    """The verdict on one phase and the evidence behind it."""

    index: int
    name: str
    start: int
    end: int
    """The phase's window: transcript entries ``[start, end)``."""
    issues: tuple[Issue, ...]
    reached: bool
    """Whether the agent showed any sign of doing this phase (a marker, a tool call, JSON)."""
    marker_seen: bool
    """Whether the phase was claimed complete (a marker line or a ``phase_complete`` call)."""
    completed_by: str | None
    """``marker``, ``tool``, ``text``, ``submit_summary``, ``structured_output`` or None."""
    tools: dict[str, int]
    """Successful calls per tool name within the phase."""
    tool_errors: int
    files_changed: tuple[str, ...]
    reconciliation: FileReconciliation
    subagents: tuple[SubagentWork, ...] = ()
    """The part of ``tools`` and ``tool_errors`` each subagent made (the rest is the main
    agent's), with the files its editing calls named."""
    checks: tuple[CheckRun, ...] = ()
    """The phase's ``checks`` as the gate last ran them (none until its other evidence
    holds)."""

    @property
    def accepted(self) -> bool:
        """True when no rule found an issue."""
        return not self.issues


@dataclass(frozen=True, slots=True, kw_only=True)
class Judgment:
    """The verdict on every phase of a task, plus the run-wide evidence."""

    phases: tuple[PhaseJudgment, ...]
    output: dict[str, Any] | None
    """The output phase's JSON when it parsed (accepted or not)."""
    files_changed: tuple[str, ...]
    files_claimed: tuple[str, ...]
    reconciliation: FileReconciliation
    """Tool-reported, on-disk and claimed files over the whole run."""
    findings: tuple[Issue, ...] = ()
    """Reported, not judged: reads outside the work directory the task allows."""
    subagents: tuple[SubagentWork, ...] = ()
    """Each subagent's calls, errors and files over the whole run."""
    task_checks: tuple[CheckRun, ...] = ()
    """The task's own ``checks`` as the gate last ran them (none until every phase is
    otherwise accepted)."""

    @property
    def accepted(self) -> bool:
        """True when every phase was accepted."""
        return all(phase.accepted for phase in self.phases)

    @property
    def issues(self) -> tuple[Issue, ...]:
        """Every issue, in phase order."""
        return tuple(issue for phase in self.phases for issue in phase.issues)


def judge(
    task: Task,
    transcript: Transcript,
    timeline: WorkspaceTimeline,
    *,
    workdir: str,
    markers: bool = True,
    check_answer: AnswerCheck | None = None,
) -> Judgment:
    """Judge every phase of ``task`` on ``transcript`` and the disk changes in ``timeline``.

    ``workdir`` is the work directory as the agent saw it (tool paths are resolved against
    it). ``markers=False`` judges the unstructured baseline: completion claims and ordering
    rules are off and every phase is judged on the whole transcript. The task's
    ``completion`` mode says which claims and answers count. ``check_answer`` reviews an
    output that breaks no other rule.
    """
    windows = phase_windows(task, transcript, markers=markers)
    calls = tool_calls(transcript)
    late = find_late_work(windows, calls) if markers else {}
    allow_reads = task.allow_reads_outside
    outside = check_paths_inside(windows, calls, workdir, allow_reads=allow_reads)
    findings = find_reads_outside(windows, calls, workdir) if allow_reads else []
    total = timeline.total()
    raw_diffs = {w.index: timeline.diff(w.start, w.end) for w in windows}
    on_disk = {*total.paths, *(p for d in raw_diffs.values() for p in d.paths)}
    spelling = disk_spelling(on_disk, fold=names_ignore_case(workdir))
    reported = sorted({spelling(p) for p in tool_reported_paths(calls, workdir)})
    # Protected paths are never the agent's work: every one the run changed or an editing
    # tool named is left out of the file lists and the reconciliation. The issue is judged on
    # the run's changes only, so putting a protected file back clears it.
    touched = {*total.paths, *reported, *(p for d in raw_diffs.values() for p in d.paths)}
    guarded = protected_changes(sorted(touched), task.protect, workdir)
    protected = {path: glob for path, glob in guarded.items() if path in total.paths}
    diffs = {index: _unprotected(diff, guarded) for index, diff in raw_diffs.items()}
    changed = tuple(p for p in total.paths if p not in guarded)
    last_index = windows[-1].index
    # Calls a phase forbade that ran anyway (nothing refused them): with phases only.
    forbidden = policy_issues(task, transcript.entries) if markers else []
    # Each protected change is the issue of the last phase that changed it.
    protected_owner = {
        path: max((i for i, d in raw_diffs.items() if path in d.paths), default=last_index)
        for path in protected
    }
    completion = task.completion if markers else "either"

    answer: SummaryCandidate | None = None
    files_claimed: list[str] = []
    results: list[PhaseJudgment] = []
    for window in windows:
        issues: list[Issue] = []
        claimed: list[str] | None = None
        diff = diffs[window.index]
        if window.phase.is_output:
            answer, json_issues = check_summary_present(
                window, transcript, markers=markers, completion=completion
            )
            issues += json_issues
            if answer is not None:
                issues += _output_rules(window, answer, changed, workdir, guarded, spelling)
                if not issues and check_answer is not None:
                    issues += _refused(window.index, check_answer(summary_value(answer) or {}))
                if window.phase.claims_files:
                    claimed = files_claimed = [
                        path
                        for path in claimed_files(
                            window.phase.claims_files,
                            summary_value(answer),
                            workdir,
                            spelling=spelling,
                        )
                        if path not in guarded
                    ]
            # json_missing means no answer anywhere; any other outcome means one was given.
            reached = not any(i.code is IssueCode.JSON_MISSING for i in json_issues)
        else:
            if markers:
                issues += check_marker(window, completion)
                issues += check_order(window, late.get(window.index), calls)
            if window.index not in late:
                issues += check_required_tools(window, calls)
                issues += check_changes(window, diff)
            reached = window.marker_at is not None or any(r.position in window for r in calls)
        # Any change breaks a read-only task, a protected one too.
        issues += check_read_only(window, raw_diffs[window.index], calls, read_only=task.read_only)
        issues += protected_issues(
            window.index,
            window.phase.name,
            {p: g for p, g in protected.items() if protected_owner[p] == window.index},
            total,
        )
        issues += [i for i in outside if (i.phase or last_index) == window.index]
        issues += [i for i in forbidden if i.phase == window.index]
        completed_by = (
            answer.source
            if window.phase.is_output and answer is not None
            else window.marker.source
            if window.marker is not None
            else None
        )
        results.append(
            _phase_judgment(
                window,
                issues,
                reached,
                completed_by,
                claimed,
                calls,
                diff,
                workdir,
                changed,
                guarded,
                spelling,
            )
        )
    output_phase = task.output_phase
    return Judgment(
        phases=tuple(results),
        output=summary_value(answer),
        files_changed=changed,
        files_claimed=tuple(files_claimed),
        reconciliation=reconcile(
            [p for p in reported if p not in guarded],
            changed,
            files_claimed if output_phase is not None and output_phase.claims_files else None,
        ),
        findings=tuple(findings),
        subagents=tuple(_unguarded(subagent_work(calls, workdir), guarded)),
    )


def _output_rules(
    window: PhaseWindow,
    answer: SummaryCandidate,
    changed: tuple[str, ...],
    workdir: str,
    protected: Mapping[str, str],
    spelling: Spelling,
) -> list[Issue]:
    value = summary_value(answer) or {}
    schema = window.phase.output_schema or {}
    issues = check_wrapped(window.index, value, schema) or check_schema(window.index, value, schema)
    issues += check_placeholders(window.index, value, schema)
    if window.phase.claims_files:
        issues += check_claims(
            window.index, window.phase.claims_files, value, changed, workdir,
            leave_out=protected, spelling=spelling,
        )  # fmt: skip
    issues += check_runtime_rejection(window.index, answer.rejected_by_runtime, issues)
    return issues


def _phase_judgment(
    window: PhaseWindow,
    issues: list[Issue],
    reached: bool,
    completed_by: str | None,
    claimed: list[str] | None,
    calls: list[CallRecord],
    diff: WorkspaceDiff,
    workdir: str,
    run_changed: tuple[str, ...],
    protected: Mapping[str, str],
    spelling: Spelling,
) -> PhaseJudgment:
    mine = [r for r in calls if r.position in window]
    changed = diff.paths
    return PhaseJudgment(
        index=window.index,
        name=window.phase.name,
        start=window.start,
        end=window.end,
        issues=tuple(issues),
        reached=reached,
        marker_seen=window.marker_at is not None,
        completed_by=completed_by,
        tools=dict(Counter(r.call.name for r in mine if r.ok)),
        tool_errors=sum(1 for r in mine if not r.ok),
        files_changed=changed,
        # Claims are about the run's changes: compared with the phase's own (none, in an
        # output phase) an accepted run would show a mismatch the run does not have.
        reconciliation=reconcile(
            [p for p in map(spelling, tool_reported_paths(mine, workdir)) if p not in protected],
            changed,
            claimed,
            claims_about=run_changed,
        ),
        subagents=tuple(_unguarded(subagent_work(mine, workdir), protected)),
    )


def _unguarded(work: list[SubagentWork], protected: Mapping[str, str]) -> list[SubagentWork]:
    """``work`` without the protected paths among its files: they are never the agent's."""
    if not protected:
        return work
    return [
        w.model_copy(update={"files": [p for p in w.files if p not in protected]}) for w in work
    ]


def _unprotected(diff: WorkspaceDiff, protected: Mapping[str, str]) -> WorkspaceDiff:
    """``diff`` without the protected paths."""
    if not protected:
        return diff
    return WorkspaceDiff(
        added=tuple(p for p in diff.added if p not in protected),
        modified=tuple(p for p in diff.modified if p not in protected),
        deleted=tuple(p for p in diff.deleted if p not in protected),
    )


def _refused(phase: int, problems: Sequence[str]) -> list[Issue]:
    return [
        Issue.of(
            IssueCode.ANSWER_REFUSED,
            problem,
            phase=phase,
            field="answer",
            requirement="Correct the answer as the message says.",
        )
        for problem in problems
    ]
