"""The pipeline report: what ``phasegate pipeline run --json`` prints.

It is the final :class:`~phasegate.pipelines.state.PipelineState` seen from outside: each
stage with its status, attempts, visits, duration, latest checks and tools; the revisions
taken; the sessions used; tokens and cost, the agent's and the grader's apart. Fields are only
ever added.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from phasegate.evidence.confinement import Blocked
from phasegate.evidence.overhead import GateOverhead
from phasegate.evidence.transcript import Usage
from phasegate.modes import DefinitionKind, Isolation, PipelineStatus
from phasegate.phases.sandbox import SandboxOutcome
from phasegate.pipelines.state import BranchRecord, PipelineState, Revision, StageRecord
from phasegate.tasks.report import SCHEMA_VERSION, exit_code_of
from phasegate.telemetry.events import PipelineCompleted, grader_usage_field, usage_fields


class PipelineReport(BaseModel):
    """How a pipeline run went."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = SCHEMA_VERSION
    pipeline: str
    run_id: str
    agent: str
    agent_version: str | None = Field(
        default=None,
        description="The version of what the agent ran (Claude Code: the CLI's, 2.1.332); "
        "null when unknown or for the scripted agent.",
    )
    sandbox: SandboxOutcome | None = Field(
        default=None,
        description="How the agent was confined (docs/sandbox.md); null: no sandbox was asked for.",
        exclude_if=lambda sandbox: sandbox is None,
    )
    blocked: tuple[Blocked, ...] = Field(
        default=(),
        description="Each attempt to leave the sandbox, as the transcript shows it: a file "
        "tool's write outside the work directory, a command's write or connection the sandbox "
        "turned away (docs/sandbox.md); the stages' blocked, stage by stage, over every "
        "process that worked on the run. Left out when there was none.",
        exclude_if=lambda blocked: not blocked,
    )
    isolation: Isolation
    verdict: PipelineStatus = Field(
        description="accepted, rejected (a stage failed its checks for good), error (the run "
        "could not go on: resumable), or running (stopped from outside)."
    )
    success: bool
    stages: tuple[StageRecord, ...]
    revisions: tuple[Revision, ...] = ()
    branches: tuple[BranchRecord, ...] = Field(
        default=(),
        description="A pipeline with branches (needs:): each part of a branch with its "
        "status (stopped: another branch's failure stopped it), work directory, sessions and "
        "merges (docs/pipelines.md). Left out for a pipeline whose stages run one after another.",
        exclude_if=lambda branches: not branches,
    )
    sessions: int = Field(description="Agent sessions started, over all resumes.")
    resumes: int = 0
    stop_overrides: int = Field(
        default=0,
        description="Times the agent runtime ended a turn although phasegate's Stop hook "
        "blocked it (Claude Code's cap on blocks in a row); each cost a session.",
    )
    usage: Usage = Field(
        default_factory=Usage,
        description="Tokens and cost of the run, over every process that worked on it: the "
        "stages' usage, plus grader_usage, plus unattributed_usage.",
    )
    grader_usage: Usage = Field(
        default_factory=Usage,
        description="Tokens and cost of the run's grader sessions (the separate sessions that "
        "judge rubric checks), over every process: the stages' grader_usage added; zero when "
        "no grader ran.",
    )
    unattributed_usage: Usage = Field(
        default_factory=Usage,
        description="Tokens and cost no stage owns: requests of the agent runtime that are "
        "not responses of the conversation (Claude Code's side requests).",
    )
    overhead: GateOverhead = Field(
        default_factory=GateOverhead,
        description="The input the run's requests carried over every process, and the gate's "
        "share of it: the stages' overhead plus that of requests no stage owns.",
    )
    duration_ms: int = Field(
        description="Wall time of the run, over every process that worked on it (each "
        "stage's duration_ms is part of it)."
    )
    error: str | None = None
    state_file: str
    session_id: str | None = Field(default=None, description="The latest agent session's id.")
    final_message: str | None = Field(
        default=None,
        description="This process's last word from the agent: the final result's text, else "
        "the last assistant text; null when there is none.",
    )

    @property
    def exit_code(self) -> int:
        """0 accepted, 1 rejected, 3 error (as ``phasegate run``)."""
        return exit_code_of(self.verdict)

    @property
    def kind(self) -> DefinitionKind:
        """``pipeline`` (:class:`~phasegate.tasks.report.DefinitionReport`)."""
        return "pipeline"

    @property
    def name(self) -> str:
        """The pipeline's name (:class:`~phasegate.tasks.report.DefinitionReport`)."""
        return self.pipeline

    @property
    def steps(self) -> tuple[StageRecord, ...]:
        """The stages (:class:`~phasegate.tasks.report.DefinitionReport`)."""
        return self.stages


def pipeline_report(
    state: PipelineState,
    *,
    agent: str,
    agent_version: str | None = None,
    sandbox: SandboxOutcome | None = None,
    state_file: Path,
    final_message: str | None = None,
) -> PipelineReport:
    """The report of a run whose state is ``state`` (copied: the report does not change)."""
    return PipelineReport(
        pipeline=state.pipeline,
        run_id=state.run_id,
        agent=agent,
        agent_version=agent_version,
        sandbox=sandbox,
        blocked=tuple(attempt for record in state.stages for attempt in record.blocked),
        isolation=state.isolation,
        verdict=state.status,
        success=state.status == "accepted",
        stages=tuple(record.model_copy() for record in state.stages),
        revisions=tuple(state.revisions),
        branches=tuple(record.model_copy() for record in state.branches),
        sessions=state.sessions,
        resumes=state.resumes,
        stop_overrides=state.stop_overrides,
        usage=state.usage,
        grader_usage=sum((record.grader_usage for record in state.stages), Usage()),
        unattributed_usage=state.unattributed_usage,
        overhead=state.overhead,
        duration_ms=state.duration_ms,
        error=state.error,
        state_file=str(state_file),
        session_id=state.session_id,
        final_message=final_message,
    )


@dataclass(frozen=True, slots=True)
class ProcessFigures:
    """What one process added to a pipeline run, for its ``pipeline.completed``: a resumed
    run's report holds every process's figures, each process's event only its own, so the
    events of a run add up to its report."""

    duration_ms: int = 0
    usage: Usage = field(default_factory=Usage)
    """Its tokens and cost: the agent's, and its grader sessions'."""
    grader: Usage = field(default_factory=Usage)
    """What its grader sessions cost: part of ``usage``."""
    unattributed: Usage = field(default_factory=Usage)
    overhead: GateOverhead = field(default_factory=GateOverhead)
    refusals: int = 0
    """Calls refused before they ran (a stage's ``allow_tools`` or ``protect``)."""
    blocked: int = 0
    """Attempts to leave the sandbox recorded."""

    def __add__(self, other: ProcessFigures) -> ProcessFigures:
        return ProcessFigures(
            duration_ms=self.duration_ms + other.duration_ms,
            usage=self.usage + other.usage,
            grader=self.grader + other.grader,
            unattributed=self.unattributed + other.unattributed,
            overhead=self.overhead + other.overhead,
            refusals=self.refusals + other.refusals,
            blocked=self.blocked + other.blocked,
        )


def completed_event(
    report: PipelineReport, figures: ProcessFigures, *, recording: str | None = None
) -> PipelineCompleted:
    """``pipeline.completed`` for ``report``, with this process's ``figures`` (its wall time,
    the usage and overhead its sessions added, its grader sessions' apart, the calls it
    refused, the attempts it saw blocked); the counts of the run as a whole (stages
    accepted, revisions, sessions) come from the report."""
    return PipelineCompleted(
        verdict=report.verdict,
        stages_accepted=sum(1 for s in report.stages if s.status == "accepted"),
        revisions=len(report.revisions),
        sessions=report.sessions,
        stop_overrides=report.stop_overrides,
        duration_ms=figures.duration_ms,
        **usage_fields(figures.usage),
        unattributed_usage=figures.unattributed.model_dump(),
        overhead=figures.overhead.model_dump(),
        refusals=figures.refusals,
        blocked=figures.blocked,
        error=report.error,
        recording=recording,
        grader_usage=grader_usage_field(figures.grader),
    )
