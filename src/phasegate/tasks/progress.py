"""The events a task run emits about its phases, built from what the run saw.

The run starts in phase 1 and moves on when the agent claims the phase it is in (or a later
one) complete. Every gate check gives one ``phase.gate`` event per phase judged; when the run
is over, its report gives one ``phase.completed`` event per phase and the closing
``run.completed``.

A ``tool.called`` event names the phase the run report counts the call under; when it can go
out is decided in :mod:`~phasegate.tasks.call_phases`.

Each function yields its events one by one, so the caller hands each to the sink before the
next is built, in the order listed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from phasegate.evidence.transcript import ToolCall, ToolResult
from phasegate.phases.model import Task
from phasegate.tasks.call_phases import CallPhases
from phasegate.telemetry.events import (
    GateTrigger,
    PhaseCompleted,
    PhaseGateChecked,
    PhaseMarker,
    PhaseStarted,
    RunCompleted,
    ToolCalled,
    grader_usage_field,
    usage_fields,
)
from phasegate.validators.judge import Judgment
from phasegate.validators.windows import CompletionClaim, PhaseWindow

if TYPE_CHECKING:
    from phasegate.tasks.report import RunReport


class PhaseProgress:
    """Which phase of ``task`` the agent is working on, moved forward by completion claims,
    and which phase each of its tool calls belongs to."""

    def __init__(self, task: Task) -> None:
        self.task = task
        self.current = 1
        """The 1-based index of the phase the agent is on."""
        self.calls = CallPhases()

    def started(self) -> PhaseStarted:
        """The event for the phase the agent is on now (phase 1, when the run starts)."""
        return PhaseStarted(phase=self.current, name=self.task.phases[self.current - 1].name)

    def call_made(self, call: ToolCall, position: int) -> None:
        """Note a tool call at transcript ``position`` (before any claim it makes counts)."""
        self.calls.made(call, position, self.current)

    def tool_called(
        self, result: ToolResult, tool: str | None, position: int
    ) -> Iterator[ToolCalled]:
        """The ``tool.called`` events ready once ``result`` arrived at ``position``."""
        return self.calls.returned(result, tool, position, self.current)

    def claimed(
        self, claims: Iterable[CompletionClaim], windows: Sequence[PhaseWindow]
    ) -> Iterator[ToolCalled | PhaseMarker | PhaseStarted]:
        """The ``tool.called`` events the claims settle (``windows``: the transcript's, cut
        with them), then a ``phase.marker`` event per claim, each followed by
        ``phase.started`` when the claim moves the agent on to a later phase (never past the
        last one)."""
        yield from self.calls.cut(windows)
        for claim in claims:
            yield PhaseMarker(
                phase=claim.index,
                name=self.task.phases[claim.index - 1].name,
                text=claim.text,
                source=claim.source,
            )
            if claim.index >= self.current and claim.index < len(self.task.phases):
                self.current = claim.index + 1
                yield self.started()


def gate_checked(
    judgment: Judgment, attempt: int, trigger: GateTrigger, tool: str | None = None
) -> Iterator[PhaseGateChecked]:
    """One ``phase.gate`` event per phase of ``judgment``, gate check number ``attempt``."""
    for phase in judgment.phases:
        yield PhaseGateChecked(
            phase=phase.index,
            name=phase.name,
            attempt=attempt,
            trigger=trigger,
            accepted=phase.accepted,
            issues=[issue.code.value for issue in phase.issues],
            tool=tool,
        )


def closing_events(
    report: RunReport, error: str | None, recording: str | None = None
) -> Iterator[PhaseCompleted | RunCompleted]:
    """The final account of a run: ``phase.completed`` per phase, then ``run.completed``
    (naming the folder of the run's ``recording``, if it is recorded)."""
    for phase in report.phases:
        yield PhaseCompleted(
            phase=phase.index,
            name=phase.name,
            status=phase.status,
            attempts=phase.attempts,
            duration_ms=phase.duration_ms,
            completed_by=phase.completed_by,
            tools=phase.tools,
            tool_errors=phase.tool_errors,
            files_changed=phase.files_changed,
            **usage_fields(phase.usage),
            issues=[i.code.value for i in phase.issues],
            overhead=phase.overhead.model_dump(),
            refusals=len(phase.refusals),
            subagents=[work.model_dump(mode="json") for work in phase.subagents],
            grader_usage=grader_usage_field(phase.grader_usage),
        )
    yield RunCompleted(
        verdict=report.verdict,
        attempts=report.attempts,
        duration_ms=report.duration_ms,
        files_changed=report.files_changed,
        findings=[f.code.value for f in report.findings],
        reverted=report.reverted is not None,
        stop_overrides=report.stop_overrides,
        **usage_fields(report.usage),
        unattributed_usage=report.unattributed_usage.model_dump(),
        overhead=report.overhead.model_dump(),
        refusals=sum(len(phase.refusals) for phase in report.phases),
        blocked=len(report.blocked),
        subagents=[work.model_dump(mode="json") for work in report.subagents],
        error=error,
        recording=recording,
        grader_usage=grader_usage_field(report.grader_usage),
    )
