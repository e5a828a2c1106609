"""Run events: the structured record a task run, a pipeline run or the service emits as it goes.

Each event is one frozen dataclass named after what happened (``RunStarted``,
``StageChecked``, ``RunQueued``, ...), whose ``event`` class attribute is its name in the log
(:data:`~phasegate.modes.EventName`); their fields are documented in ``docs/events.md``. The
task-run events come first (``tool.called``, ``tool.refused``, ``sandbox.blocked`` and
``retry.scheduled`` come in pipeline runs too), then the pipeline-run events, then the ones
the HTTP service frames a run with: ``run.queued`` when it is accepted, ``run.cancelled`` or
``run.interrupted`` when it ends early, and always a final ``done`` with the status the
service gives it.

A :class:`RunEvent` carries one of them with the run's identity (``run_id``, ``task``,
``mode``, and ``isolation`` for a pipeline), a UTC timestamp and :data:`SCHEMA_VERSION`.
Runners hand events to an :data:`EventSink`; the log turns them into JSON lines, the CLI into
progress lines.

One concept in one module (about 620 lines): every event and the record that carries it,
so a new event is added, named and documented in one place.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar, Literal

from phasegate.evidence.transcript import BlockedKind, SandboxBlocked, Usage
from phasegate.modes import (
    DefinitionKind,
    EventName,
    Isolation,
    LoggedMode,
    PhaseStatus,
    PipelineStatus,
    ReportVerdict,
    RunStatus,
    StageStatus,
    Verdict,
)
from phasegate.validators.check_runs import CheckRun

GateTrigger = Literal["stop", "tool", "end"]
"""What made the gate check: the agent stopping, a completion tool call, the session's end."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EventFields:
    """The fields of one event; a subclass per event name."""

    event: ClassVar[EventName]
    _absent_when_none: ClassVar[frozenset[str]] = frozenset()
    """Fields left out of the line (not written as null) when they are None."""

    def as_fields(self) -> dict[str, Any]:
        """The event's own fields, as they appear in a log line."""
        return {
            f.name: value
            for f in dataclasses.fields(self)
            if (value := getattr(self, f.name)) is not None or f.name not in self._absent_when_none
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageFields(EventFields):
    """Tokens and cost: the fields of the events that close a phase, a run or a pipeline
    (see :mod:`phasegate.evidence.usage_split` for how they are counted)."""

    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    """None when the agent does not report cost."""
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0


def usage_fields(usage: Usage) -> dict[str, Any]:
    """The :class:`UsageFields` of ``usage``, as keyword arguments."""
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cost_usd": usage.cost_usd,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens,
        "cache_read_input_tokens": usage.cache_read_input_tokens,
    }


def grader_usage_field(usage: Usage | None) -> dict[str, Any] | None:
    """``usage`` as the ``grader_usage`` object of a line (the shape of ``unattributed_usage``:
    the four token counts and ``cost_usd``), or None, which leaves the field out, when no
    grader session spent anything (None or zero)."""
    return None if usage is None or usage.is_zero else usage.model_dump()


@dataclass(frozen=True, slots=True, kw_only=True)
class RunStarted(EventFields):
    """A task run begins, before the agent starts."""

    event: ClassVar[EventName] = "run.started"
    agent: str
    agent_version: str | None = None
    """The version of what the agent runs (Claude Code: the CLI's); None when unknown."""
    workdir: str
    phases: int
    max_attempts: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PhaseStarted(EventFields):
    """The agent moved on to a phase."""

    event: ClassVar[EventName] = "phase.started"
    phase: int
    name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PhaseMarker(EventFields):
    """The agent claimed a work phase complete, by a marker line or a tool call."""

    event: ClassVar[EventName] = "phase.marker"
    phase: int
    name: str
    text: str
    source: Literal["marker", "tool"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PhaseGateChecked(EventFields):
    """The gate judged a phase (at a stop, a completion tool call, or the session's end)."""

    event: ClassVar[EventName] = "phase.gate"
    _absent_when_none: ClassVar[frozenset[str]] = frozenset({"tool"})
    phase: int
    name: str
    attempt: int
    trigger: GateTrigger
    accepted: bool
    issues: list[str]
    tool: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckRan(EventFields):
    """The gate ran one check of a task on the disk: one of a phase's ``checks``, or of the
    task's own (``phase`` absent); in a pipeline, of the task of stage ``stage`` (absent in a
    task run). Its time is the check's own, never the model's. A ``rubric`` a grader judged
    carries its ``criteria``, and ``grader_usage`` when a grader session ran for this run of
    it (absent when its answer was kept for equal evidence)."""

    event: ClassVar[EventName] = "check.ran"
    _absent_when_none: ClassVar[frozenset[str]] = frozenset(
        {"phase", "stage", "criteria", "grader_usage"}
    )
    stage: int | None = None
    phase: int | None
    check: int
    """The check's 0-based place in its list."""
    kind: str
    description: str
    run: int
    """The gate's judgment (1 = its first) that ran it: the report's ``run`` of a check."""
    exit_code: int | None
    """A command's exit status; null for other kinds, and for a command that did not finish
    or could not start."""
    duration_ms: int
    passed: bool
    criteria: list[dict[str, Any]] | None = None
    """A graded rubric's verdicts: ``id``, ``criterion``, ``verdict``, ``reason`` each."""
    grader_usage: dict[str, Any] | None = None
    """What this run's grader sessions cost (:func:`grader_usage_field`)."""

    @classmethod
    def of(cls, run: CheckRun, *, stage: int | None = None) -> CheckRan:
        """The event of ``run`` (in the task of pipeline stage ``stage``)."""
        outcome = run.outcome
        return cls(
            stage=stage,
            phase=run.phase,
            check=run.position,
            kind=run.outcome.kind,
            description=run.outcome.description,
            run=run.run,
            exit_code=run.outcome.exit_code,
            duration_ms=run.duration_ms,
            passed=run.passed,
            criteria=[v.as_dict() for v in outcome.criteria] if outcome.criteria else None,
            grader_usage=grader_usage_field(outcome.grader_usage),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class PhaseCompleted(UsageFields):
    """A phase's final account, once the run is over: the agent's tokens and cost, and its
    grader's apart."""

    event: ClassVar[EventName] = "phase.completed"
    _absent_when_none: ClassVar[frozenset[str]] = frozenset({"grader_usage"})
    phase: int
    name: str
    status: PhaseStatus
    attempts: int
    duration_ms: int
    completed_by: str | None
    tools: dict[str, int]
    tool_errors: int
    files_changed: list[str]
    issues: list[str]
    overhead: dict[str, Any] = field(default_factory=dict)
    """The input the phase's requests carried and the gate's share (the report's
    ``overhead``)."""
    refusals: int = 0
    """Tool calls refused before they ran while this was the phase."""
    subagents: list[dict[str, Any]] = field(default_factory=list)
    """The part of ``tools`` and ``tool_errors`` each subagent made (the report's
    ``subagents``)."""
    grader_usage: dict[str, Any] | None = None
    """What the grader sessions of its checks cost (the report's phase ``grader_usage``);
    absent when none spent anything."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunCompleted(UsageFields):
    """A task run is over: its tokens and cost, the agent's and the grader's together, and
    the grader's apart."""

    event: ClassVar[EventName] = "run.completed"
    _absent_when_none: ClassVar[frozenset[str]] = frozenset({"recording", "grader_usage"})
    verdict: Verdict
    attempts: int
    duration_ms: int
    files_changed: list[str]
    findings: list[str]
    reverted: bool
    error: str | None
    stop_overrides: int = 0
    unattributed_usage: dict[str, Any] = field(default_factory=dict)
    """Tokens and cost no phase owns (the report's ``unattributed_usage``)."""
    overhead: dict[str, Any] = field(default_factory=dict)
    """The input the run's requests carried and the gate's share (the report's
    ``overhead``)."""
    refusals: int = 0
    """Tool calls refused before they ran, over the run."""
    blocked: int = 0
    """Attempts to leave the sandbox it blocked, over the run (the report's ``blocked``)."""
    subagents: list[dict[str, Any]] = field(default_factory=list)
    """Each subagent's calls, errors and files over the run (the report's ``subagents``)."""
    recording: str | None = None
    """The folder the run's recording is written to as it ends (absent: not recorded)."""
    grader_usage: dict[str, Any] | None = None
    """What the run's grader sessions cost (the report's ``grader_usage``, part of the
    totals); absent when none spent anything."""


# -- in task runs and pipeline runs alike ---------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCalled(EventFields):
    """A tool call came back with its result: ``phase`` in a task run, ``stage`` in a
    pipeline run."""

    event: ClassVar[EventName] = "tool.called"
    _absent_when_none: ClassVar[frozenset[str]] = frozenset({"phase", "stage"})
    phase: int | None = None
    stage: int | None = None
    tool: str | None
    tool_use_id: str
    ok: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class CallRefused(EventFields):
    """A tool call was refused before it ran (the current phase does not allow its tool, or it
    would change a protected path): ``phase`` in a task run, ``stage`` in a pipeline run. No
    ``tool.called`` follows for it: it did not run."""

    event: ClassVar[EventName] = "tool.refused"
    _absent_when_none: ClassVar[frozenset[str]] = frozenset({"phase", "stage"})
    phase: int | None = None
    stage: int | None = None
    tool: str
    tool_use_id: str
    input: str
    """What the call asked for, shortened (its path or command)."""
    reason: str
    """What the model was told."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AttemptBlocked(EventFields):
    """The sandbox kept a tool call in: one attempt to leave it, as the run records it
    (a :class:`~phasegate.evidence.transcript.SandboxBlocked` entry, docs/sandbox.md).
    ``phase`` in a task run (the one current then), ``stage`` in a pipeline run."""

    event: ClassVar[EventName] = "sandbox.blocked"
    _absent_when_none: ClassVar[frozenset[str]] = frozenset({"phase", "stage"})
    phase: int | None = None
    stage: int | None = None
    kind: BlockedKind
    tool: str
    tool_use_id: str
    target: str
    """What was kept in: a file, a command, a host (at most 300 characters)."""
    detail: str
    """The line that says so (at most 300 characters)."""

    @classmethod
    def of(
        cls, entry: SandboxBlocked, *, phase: int | None = None, stage: int | None = None
    ) -> AttemptBlocked:
        """The event of the attempt ``entry`` records, in ``phase`` or ``stage``."""
        return cls(
            phase=phase,
            stage=stage,
            kind=entry.blocked,
            tool=entry.tool,
            tool_use_id=entry.tool_use_id,
            target=entry.target,
            detail=entry.detail,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryScheduled(EventFields):
    """A failed request (``source: claude-code``) or session (``source: phasegate``) is
    retried."""

    event: ClassVar[EventName] = "retry.scheduled"
    attempt: int
    reason: str
    delay_ms: int
    source: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PipelineStarted(EventFields):
    """A pipeline run begins (or resumes, in a new process), before the agent starts; a
    Ralph loop's run says what ends it in ``loop`` (``promise``, ``max_iterations``, null
    when unbounded)."""

    event: ClassVar[EventName] = "pipeline.started"
    _absent_when_none: ClassVar[frozenset[str]] = frozenset({"loop"})
    agent: str
    agent_version: str | None = None
    """The version of what the agent runs (Claude Code: the CLI's); None when unknown."""
    workdir: str
    stages: int
    stage: int
    resumed: bool
    loop: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PipelineResumed(EventFields):
    """An interrupted pipeline run continues: in its saved ``session``, or ``fresh``."""

    event: ClassVar[EventName] = "pipeline.resumed"
    _absent_when_none: ClassVar[frozenset[str]] = frozenset({"reason"})
    stage: int
    name: str
    how: Literal["session", "fresh"]
    reason: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StageStarted(EventFields):
    """A stage becomes current (``visit`` counts its visits, revisions included)."""

    event: ClassVar[EventName] = "stage.started"
    stage: int
    name: str
    visit: int


@dataclass(frozen=True, slots=True, kw_only=True)
class StageChecked(EventFields):
    """A stage's exit checks were run."""

    event: ClassVar[EventName] = "stage.checked"
    stage: int
    name: str
    attempt: int
    trigger: Literal["stop", "end"]  # a stage has no completion tools
    passed: bool
    failed: list[str]


@dataclass(frozen=True, slots=True, kw_only=True)
class StageRevision(EventFields):
    """A stage that kept failing sends the pipeline back to an earlier stage."""

    event: ClassVar[EventName] = "stage.revision"
    stage: int
    name: str
    to_stage: int
    to_name: str
    revision: int
    failed: list[str]


@dataclass(frozen=True, slots=True, kw_only=True)
class StageCompleted(EventFields):
    """A stage's visit ended: accepted, rejected, or left ``pending`` for a revision."""

    event: ClassVar[EventName] = "stage.completed"
    _absent_when_none: ClassVar[frozenset[str]] = frozenset({"grader_usage"})
    stage: int
    name: str
    status: StageStatus
    attempts: int
    visits: int
    duration_ms: int
    files_changed: list[str]
    checks: list[dict[str, Any]]
    subagents: list[dict[str, Any]] = field(default_factory=list)
    """The part of the visit's tool calls each subagent made (the stage's ``subagents``)."""
    grader_usage: dict[str, Any] | None = None
    """What the grader sessions of the stage's checks cost so far, over all its visits (the
    stage's ``grader_usage``); absent when none spent anything."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PipelineCompleted(UsageFields):
    """This process's part of a pipeline run is over; a Ralph loop's run counts the
    ``iterations`` it took."""

    event: ClassVar[EventName] = "pipeline.completed"
    _absent_when_none: ClassVar[frozenset[str]] = frozenset(
        {"iterations", "recording", "grader_usage"}
    )
    verdict: PipelineStatus
    stages_accepted: int
    revisions: int
    sessions: int
    duration_ms: int
    error: str | None
    iterations: int | None = None
    stop_overrides: int = 0
    unattributed_usage: dict[str, Any] = field(default_factory=dict)
    """Tokens and cost of this process that no stage owns."""
    overhead: dict[str, Any] = field(default_factory=dict)
    """The input this process's requests carried and the gate's share."""
    refusals: int = 0
    """Tool calls this process refused before they ran."""
    blocked: int = 0
    """Attempts to leave the sandbox blocked in this process (the report's ``blocked``)."""
    recording: str | None = None
    """The folder the run's recording is written to as it ends (absent: not recorded)."""
    grader_usage: dict[str, Any] | None = None
    """What this process's grader sessions cost (part of its totals); absent when none
    spent anything."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunQueued(EventFields):
    """The service accepted the run; it starts when a slot is free."""

    event: ClassVar[EventName] = "run.queued"
    kind: DefinitionKind
    position: int
    """1 when the run is next to start; 0 when a slot is free for it now."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunCancelled(EventFields):
    """The run was cancelled on request: its agent was stopped, or it never started."""

    event: ClassVar[EventName] = "run.cancelled"
    started: bool
    """Whether the agent had started."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunInterrupted(EventFields):
    """The service stopped or restarted before the run finished."""

    event: ClassVar[EventName] = "run.interrupted"
    reason: str
    resumable: bool
    """Whether resuming continues it (a pipeline)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunDone(EventFields):
    """The last event of a run (until a resumed pipeline continues it)."""

    event: ClassVar[EventName] = "done"
    status: RunStatus
    """``finished``, ``failed``, ``cancelled`` or ``interrupted``."""
    verdict: ReportVerdict | None
    """The report's verdict, when the run ended with a report."""


SCHEMA_VERSION = 5
"""Version of the event line format; ``docs/events.md`` keeps its changelog."""

RUN_ID_LENGTH = 12
"""Hex digits in a run id: short enough to read in a log, long enough not to repeat."""


def new_run_id() -> str:
    """A fresh random run id (:data:`RUN_ID_LENGTH` hex digits)."""
    return uuid.uuid4().hex[:RUN_ID_LENGTH]


EventData = (
    RunStarted
    | PhaseStarted
    | ToolCalled
    | CallRefused
    | AttemptBlocked
    | PhaseMarker
    | PhaseGateChecked
    | CheckRan
    | PhaseCompleted
    | RetryScheduled
    | RunCompleted
    | PipelineStarted
    | PipelineResumed
    | StageStarted
    | StageChecked
    | StageRevision
    | StageCompleted
    | PipelineCompleted
    | RunQueued
    | RunCancelled
    | RunInterrupted
    | RunDone
)
"""The fields of any one event."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass(frozen=True, slots=True)
class RunEvent:
    """One thing that happened in a run, with the run it belongs to."""

    data: EventData
    run_id: str
    task: str
    """The task's name; in a pipeline run, the pipeline's."""
    mode: LoggedMode
    """The mode the run was gated in; ``judge`` for a judged transcript."""
    isolation: Isolation | None = None
    """In a pipeline run: ``session`` or ``process``; None in a task run."""
    branch: str | None = None
    """In a pipeline whose stages run in branches: the branch of the stage the event is about
    (the name of the stage that started it); None elsewhere, and for the run's own events."""
    timestamp: str = field(default_factory=_now)
    schema_version: int = SCHEMA_VERSION

    @property
    def event(self) -> EventName:
        """The event's name (``stage.checked``)."""
        return self.data.event

    @property
    def fields(self) -> dict[str, Any]:
        """The event's own fields, as in the log line."""
        return self.data.as_fields()

    def as_dict(self) -> dict[str, Any]:
        """The event as one flat JSON-ready mapping (the log line shape)."""
        common: dict[str, Any] = {
            "event": self.event,
            "timestamp": self.timestamp,
            "run_id": self.run_id,
            "task": self.task,
            "mode": self.mode,
        }
        if self.isolation is not None:
            common["isolation"] = self.isolation
        if self.branch is not None:
            common["branch"] = self.branch
        common["schema_version"] = self.schema_version
        return {**common, **self.fields}


EventSink = Callable[[RunEvent], None]
"""Receives every event of a run, in order.

A sink that writes files names them in an ``output_files`` attribute (as
:class:`~phasegate.telemetry.log.EventLog` does): runners never count those files as the
agent's work, even when they lie in the work directory.
"""


def output_files(sink: EventSink | None) -> tuple[Path, ...]:
    """The files ``sink`` writes, from its ``output_files`` attribute (none without one)."""
    files = getattr(sink, "output_files", ())
    return tuple(Path(file) for file in files)


class _FanOut:
    """Hands each event to several sinks in turn; writes the files they write."""

    def __init__(self, sinks: Sequence[EventSink]) -> None:
        self.sinks = tuple(sinks)
        self.output_files = tuple(file for sink in self.sinks for file in output_files(sink))

    def __call__(self, event: RunEvent) -> None:
        for sink in self.sinks:
            sink(event)


def fan_out(sinks: Sequence[EventSink]) -> EventSink | None:
    """One sink that hands each event to every sink in ``sinks`` (None when there are none);
    its ``output_files`` are theirs."""
    if not sinks:
        return None
    return _FanOut(sinks)
