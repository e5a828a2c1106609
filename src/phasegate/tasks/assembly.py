"""Turning a judged run into its :class:`~phasegate.tasks.report.RunReport`.

Pure bookkeeping: statuses per phase, durations from the entry times, each phase's tokens
and share of the cost (split by :mod:`phasegate.evidence.usage_split`), its grader's tokens and
cost (the runs of its checks, the task's own in the last phase), what the gate added
to their input (:mod:`phasegate.evidence.overhead`), and the findings
(reconciliation differences, reads outside the work directory). The runner hands in what it
saw.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from phasegate.evidence.confinement import blocked_attempts
from phasegate.evidence.overhead import split_overhead
from phasegate.evidence.transcript import RunResult, ToolRefused, Transcript, Usage
from phasegate.evidence.usage_split import split_usage
from phasegate.modes import Mode, PhaseStatus, Verdict
from phasegate.phases.sandbox import SandboxOutcome
from phasegate.tasks.report import CheckReport, PhaseReport, RefusedCall, RunReport
from phasegate.validators.check_runs import CheckRun, grader_usage
from phasegate.validators.judge import Judgment
from phasegate.validators.reconcile import reconciliation_findings
from phasegate.workspace.revert import RevertReport


@dataclass(frozen=True, slots=True, kw_only=True)
class RunFacts:
    """What the runner knows about a finished run, besides the judgment."""

    run_id: str
    task: str
    mode: Mode
    agent: str
    agent_version: str | None = None
    sandbox: SandboxOutcome | None = None
    transcript: Transcript
    times: Sequence[float]
    """Monotonic time at which each transcript entry was recorded."""
    attempts: int
    phase_attempts: Callable[[int], int]
    duration_ms: int
    retries: int
    api_retries: int
    error: str | None
    reverted: RevertReport | None = None
    gate_text: Mapping[int, int] = field(default_factory=dict)
    """Characters of each text the gate wrote (prompts, completion-tool answers), by its
    transcript position (none for a judged transcript: phasegate sent nothing)."""
    tool_characters: int = 0
    """Characters of the gate's tool definitions in each request (0: none offered)."""
    check_runs: Sequence[CheckRun] = ()
    """Every run of a check the gate made, for the time they took and what their grader
    sessions cost."""
    checks_skipped: bool = False
    """The task has checks and none was run: the caller asked so (a judgment)."""


def verdict_of(judgment: Judgment, error: str | None) -> Verdict:
    """``error`` when the run failed, else accepted or rejected by the judgment."""
    return "error" if error is not None else "accepted" if judgment.accepted else "rejected"


def assemble_report(judgment: Judgment, facts: RunFacts) -> RunReport:
    """The report of a run judged as ``judgment``."""
    transcript = facts.transcript
    statuses = _statuses(judgment, failed=facts.error is not None)
    owner = _phase_owner(judgment)
    usage = split_usage(transcript, owner, len(judgment.phases))
    overhead = split_overhead(
        transcript,
        owner,
        len(judgment.phases),
        gate_text=facts.gate_text,
        tool_characters=facts.tool_characters,
    )
    refusals = _refusals(transcript, owner)
    graders = _grader_usage(judgment, facts.check_runs)
    phases = []
    for phase, phase_usage, phase_overhead in zip(
        judgment.phases, usage.parts, overhead.parts, strict=True
    ):
        status = statuses[phase.index]
        phases.append(
            PhaseReport(
                index=phase.index,
                name=phase.name,
                status=status,
                attempts=0 if status == "not_reached" else facts.phase_attempts(phase.index),
                marker_seen=phase.marker_seen,
                completed_by=phase.completed_by,
                duration_ms=_elapsed_ms(facts.times, phase.start, phase.end),
                tools=phase.tools,
                tool_errors=phase.tool_errors,
                files_changed=list(phase.files_changed),
                subagents=list(phase.subagents),
                usage=phase_usage,
                grader_usage=graders.get(phase.index, Usage()),
                overhead=phase_overhead,
                refusals=refusals.get(phase.index - 1, []),
                reconciliation=phase.reconciliation,
                checks=[CheckReport.of(run) for run in phase.checks],
                check_ms=sum(r.duration_ms for r in facts.check_runs if r.phase == phase.index),
                issues=list(phase.issues),
            )
        )
    verdict = verdict_of(judgment, facts.error)
    graded = sum((phase.grader_usage for phase in phases), Usage())
    return RunReport(
        run_id=facts.run_id,
        task=facts.task,
        mode=facts.mode,
        agent=facts.agent,
        agent_version=facts.agent_version,
        sandbox=facts.sandbox,
        blocked=blocked_attempts(facts.transcript.entries) if facts.sandbox else (),
        verdict=verdict,
        success=verdict == "accepted",
        attempts=facts.attempts,
        phases=phases,
        summary=judgment.output if verdict == "accepted" else None,
        files_changed=list(judgment.files_changed),
        files_claimed=list(judgment.files_claimed),
        subagents=list(judgment.subagents),
        reconciliation=judgment.reconciliation,
        findings=[*reconciliation_findings(judgment.reconciliation), *judgment.findings],
        reverted=facts.reverted,
        checks=[CheckReport.of(run) for run in judgment.task_checks],
        check_ms=sum(run.duration_ms for run in facts.check_runs),
        checks_skipped=facts.checks_skipped,
        usage=usage.total + graded,
        grader_usage=graded,
        unattributed_usage=usage.unattributed,
        usage_exact=usage.exact,
        overhead=overhead.total,
        duration_ms=facts.duration_ms,
        turns=sum(e.num_turns or 0 for e in transcript.entries if isinstance(e, RunResult)),
        retries=facts.retries,
        api_retries=facts.api_retries,
        stop_overrides=transcript.stop_overrides,
        error=facts.error,
        session_id=transcript.session_id,
        final_message=transcript.final_message,
        transcript=transcript,
    )


def _grader_usage(judgment: Judgment, runs: Sequence[CheckRun]) -> dict[int, Usage]:
    """What the grader sessions of ``runs`` cost, by the phase whose checks they judged: the
    task's own checks (``phase`` None) in the last phase, where their failures go too."""
    last = judgment.phases[-1].index if judgment.phases else 1
    owners: dict[int, list[CheckRun]] = {}
    for run in runs:
        owners.setdefault(run.phase if run.phase is not None else last, []).append(run)
    return {index: grader_usage(owned) for index, owned in owners.items()}


def _refusals(
    transcript: Transcript, owner: Callable[[int], int | None]
) -> dict[int, list[RefusedCall]]:
    """The refused calls by the phase (0-based) whose window holds them: as tokens are."""
    found: dict[int, list[RefusedCall]] = {}
    for position, entry in enumerate(transcript.entries):
        if isinstance(entry, ToolRefused):
            part = owner(position)
            refused = RefusedCall(
                tool=entry.name, tool_use_id=entry.tool_use_id, input=entry.input,
                reason=entry.reason,
            )  # fmt: skip
            # No window holds it only where windows overlap: the phase that was current then.
            index = part if part is not None else (entry.phase or 1) - 1
            found.setdefault(index, []).append(refused)
    return found


def _elapsed_ms(times: Sequence[float], start: int, end: int) -> int:
    if not times or end <= start:
        return 0
    first = times[min(start, len(times) - 1)]
    last = times[min(end, len(times)) - 1]
    return int(max(last - first, 0.0) * 1000)


def _phase_owner(judgment: Judgment) -> Callable[[int], int | None]:
    """Which phase (0-based) owns a transcript entry: the one phase whose window holds it; the
    last phase for what came after every window (the agent went on after its last claim);
    none where windows overlap (without markers every window is the whole run)."""
    windows = [(phase.start, phase.end) for phase in judgment.phases]
    last_end = max((end for _, end in windows), default=0)

    def owner(position: int) -> int | None:
        holding = [i for i, (start, end) in enumerate(windows) if start <= position < end]
        if len(holding) == 1:
            return holding[0]
        if not holding and windows and position >= last_end:
            return len(windows) - 1
        return None

    return owner


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
