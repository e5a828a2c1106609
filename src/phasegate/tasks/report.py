"""The run report: what ``phasegate run --json`` prints and ``Runner.run`` returns.

Its shape is a contract (CI steps and dashboards read it): fields are only ever added, and
``schema_version`` changes when a field changes meaning.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from phasegate.errors import PhasegateError
from phasegate.evidence.confinement import Blocked
from phasegate.evidence.overhead import GateOverhead
from phasegate.evidence.transcript import Transcript, Usage
from phasegate.modes import DefinitionKind, Mode, PhaseStatus, ReportVerdict, StepStatus, Verdict
from phasegate.phases.sandbox import SandboxOutcome
from phasegate.validators.check_runs import CheckRun
from phasegate.validators.issues import Issue
from phasegate.validators.reconcile import FileReconciliation
from phasegate.validators.subagents import SubagentWork
from phasegate.workspace.revert import RevertReport

SCHEMA_VERSION = 1
"""The version of the report's JSON shape; it changes when a field changes meaning."""
EXIT_ACCEPTED = 0
"""The exit code of an accepted run."""
EXIT_REJECTED = 1
"""The exit code of a rejected run: a normal result, which no error shares."""
EXIT_OTHER = PhasegateError.exit_code
"""The exit code of any other verdict (an error, or a pipeline that stopped unfinished)."""


class StepReport(Protocol):
    """What every step of a run reports, a task's phase (:class:`PhaseReport`) or a
    pipeline's stage (its ``StageRecord``)."""

    @property
    def index(self) -> int:
        """1-based position: the phase's marker number, the stage's place in the pipeline."""

    @property
    def name(self) -> str:
        """The phase's or stage's name."""

    @property
    def status(self) -> StepStatus:
        """How it ended (``accepted``, ``rejected``, ``not_reached``; a stage may also be
        ``pending`` or ``running``)."""

    @property
    def attempts(self) -> int:
        """Gate checks (a phase) or exit checks (a stage) it went through."""

    @property
    def files_changed(self) -> list[str]:
        """Files added, modified or deleted while it ran."""

    @property
    def usage(self) -> Usage:
        """The agent's tokens of the responses that started in it, and its share of the
        cost (the grader's never among them)."""

    @property
    def grader_usage(self) -> Usage:
        """Tokens and cost of the grader sessions that judged its rubric checks (zero when
        no grader ran)."""

    @property
    def overhead(self) -> GateOverhead:
        """The input its requests carried, and the gate's share of it."""


class DefinitionReport(Protocol):
    """What every run's report answers, whatever it ran: a task's :class:`RunReport` or a
    pipeline's ``PipelineReport``. Readers that only need these (the GitHub view, the
    execute lines, a batch unit's outcome) take this and never ask which kind it is."""

    @property
    def kind(self) -> DefinitionKind:
        """What ran: ``task`` or ``pipeline``."""

    @property
    def name(self) -> str:
        """The task's or pipeline's name."""

    @property
    def steps(self) -> Sequence[StepReport]:
        """The phases or stages, in order."""

    @property
    def verdict(self) -> ReportVerdict:
        """How the run ended (``accepted``, ``rejected``, ``error``, or where a pipeline
        stopped)."""

    @property
    def success(self) -> bool:
        """Whether the run was accepted."""

    @property
    def exit_code(self) -> int:
        """0 accepted, 1 rejected, 3 anything else."""

    @property
    def usage(self) -> Usage:
        """Tokens and cost of the run: the steps' ``usage``, plus ``grader_usage``, plus
        ``unattributed_usage``."""

    @property
    def grader_usage(self) -> Usage:
        """Tokens and cost of every grader session of the run: the steps' ``grader_usage``
        added."""

    @property
    def unattributed_usage(self) -> Usage:
        """Tokens and cost no step owns (the agent runtime's side requests)."""

    @property
    def overhead(self) -> GateOverhead:
        """The input the run's requests carried, and the gate's share of it: the steps'
        plus that of requests no step owns."""

    @property
    def duration_ms(self) -> int:
        """Wall time."""

    @property
    def error(self) -> str | None:
        """Why the run failed, when it did."""

    @property
    def session_id(self) -> str | None:
        """The latest agent session's id."""

    @property
    def final_message(self) -> str | None:
        """The agent's last word."""

    @property
    def sandbox(self) -> SandboxOutcome | None:
        """How the agent was confined (None: no sandbox was asked for)."""

    @property
    def blocked(self) -> tuple[Blocked, ...]:
        """Each attempt to leave the sandbox."""

    def model_dump_json(self, *, indent: int | None = None) -> str:
        """The report as its JSON contract."""
        ...

    def model_dump(self, *, mode: str = "python") -> dict[str, Any]:
        """The report as a dict (``mode="json"``: JSON values only)."""
        ...


def exit_code_of(verdict: ReportVerdict) -> int:
    """The exit code of a verdict: 0 accepted, 1 rejected, 3 anything else (error, or a
    pipeline still running when it stopped)."""
    return {"accepted": EXIT_ACCEPTED, "rejected": EXIT_REJECTED}.get(verdict, EXIT_OTHER)


class RefusedCall(BaseModel):
    """A tool call refused before it ran: it did nothing and counts as no use of its tool."""

    model_config = ConfigDict(frozen=True)

    tool: str
    tool_use_id: str
    input: str = Field(description="What the call asked for: its path or command, shortened.")
    reason: str = Field(description="What the model was told.")


class CriterionReport(BaseModel):
    """A grader's verdict on one criterion of a ``rubric`` check, with its reason."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(description="The criterion's id in its rubric (c1, c2, ... or its own).")
    criterion: str = Field(description="What the criterion asks, as the rubric words it.")
    verdict: Literal["met", "not_met", "cannot_tell"] = Field(
        description="The grader's word: only met counts; cannot_tell is not met."
    )
    reason: str = Field(description="Why, in the grader's words (untrusted text).")


class CheckReport(BaseModel):
    """One check of a task as the gate last ran it: the outcome that decided."""

    model_config = ConfigDict(frozen=True)

    kind: str = Field(description="The check's kind: command, file_exists, min_lines, ...")
    description: str = Field(description="What must hold.")
    passed: bool
    detail: str = Field(
        description="What was found; for a command, its exit status and the end of its output."
    )
    exit_code: int | None = Field(
        default=None, description="A command's exit status (null: other kinds, or it did not end)."
    )
    duration_ms: int = Field(description="How long the run that decided took.")
    run: int = Field(
        description="The gate's judgment (1 = its first) whose run of the check decided: a "
        "check is not run again while nothing it looks at has changed."
    )
    criteria: list[CriterionReport] = Field(
        default_factory=list,
        description="For a rubric a grader judged: its verdict and reason on each criterion "
        "(left out for every other check).",
        exclude_if=lambda criteria: not criteria,
    )

    @classmethod
    def of(cls, run: CheckRun) -> CheckReport:
        """The report of ``run``."""
        return cls.model_validate(run.as_dict())


class PhaseReport(BaseModel):
    """How one phase went."""

    model_config = ConfigDict(frozen=True)

    index: int
    name: str
    status: PhaseStatus
    attempts: int = Field(description="Gate checks this phase went through until its final status.")
    marker_seen: bool = Field(
        description="The phase was claimed complete (a marker line or a phase_complete call)."
    )
    completed_by: str | None = Field(
        default=None,
        description="What completed it: marker, tool (phase_complete), or for the output "
        "phase text, submit_summary or structured_output.",
    )
    duration_ms: int
    tools: dict[str, int] = Field(
        description="Successful calls per tool name in this phase, its subagents' included."
    )
    tool_errors: int
    files_changed: list[str]
    subagents: list[SubagentWork] = Field(
        default_factory=list,
        description="The part of tools and tool_errors each subagent made in this phase, with "
        "the files its editing calls named; the rest is the main agent's.",
    )
    usage: Usage = Field(
        default_factory=Usage,
        description="The agent's tokens of the model responses that started in this phase, "
        "each counted once at its final count; cost is the agent's cost shared out by "
        "price-weighted tokens (the runtime reports cost per run, not per response). The "
        "grader's are in grader_usage, never here.",
    )
    grader_usage: Usage = Field(
        default_factory=Usage,
        description="Tokens and cost of the grader sessions that judged this phase's rubric "
        "checks, every run of them counted (the task's own checks count in the last phase); "
        "zero when no grader ran. Each session reports its own cost: nothing is shared out.",
    )
    overhead: GateOverhead = Field(
        default_factory=GateOverhead,
        description="The input this phase's requests carried, and the gate's share of it "
        "(its tool definitions and its own text; estimated tokens).",
    )
    reconciliation: FileReconciliation | None = Field(
        default=None, description="Tool-reported, on-disk and claimed files in this phase."
    )
    refusals: list[RefusedCall] = Field(
        default_factory=list,
        description="Tool calls refused before they ran in this phase (the phase's "
        "allow_tools, a protected path, a summary handed in too early).",
    )
    checks: list[CheckReport] = Field(
        default_factory=list,
        description="The phase's checks as the gate last ran them (empty until its other "
        "evidence held, or when it has none).",
        exclude_if=lambda checks: not checks,
    )
    check_ms: int = Field(
        default=0,
        description="Time the gate spent running this phase's checks, every run counted; "
        "part of duration_ms, never the model's time.",
        exclude_if=lambda check_ms: not check_ms,
    )
    issues: list[Issue]


class RunReport(BaseModel):
    """How a whole run went; ``verdict`` decides the exit code (0 / 1 / 3)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = SCHEMA_VERSION
    run_id: str
    task: str
    mode: Mode
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
        "turned away (docs/sandbox.md). Left out when there was none.",
        exclude_if=lambda blocked: not blocked,
    )
    verdict: Verdict
    success: bool
    attempts: int = Field(description="Gate checks made in this run.")
    turns: int = Field(default=0, description="Model turns the agent runtime reported.")
    retries: int = Field(
        default=0, description="Sessions phasegate restarted after a transient failure."
    )
    api_retries: int = Field(
        default=0, description="API requests the agent runtime retried itself."
    )
    stop_overrides: int = Field(
        default=0,
        description="Times the agent runtime ended a turn although the gate's Stop hook "
        "blocked it (Claude Code's cap on blocks in a row); the session ended there.",
    )
    phases: list[PhaseReport]
    summary: dict[str, Any] | None = Field(description="The accepted JSON, or null.")
    files_changed: list[str]
    files_claimed: list[str]
    subagents: list[SubagentWork] = Field(
        default_factory=list,
        description="Each subagent's calls, errors and files over the whole run (the "
        "phases' subagents, and any call after the last phase).",
    )
    reconciliation: FileReconciliation | None = Field(
        default=None, description="Tool-reported, on-disk and claimed files over the run."
    )
    findings: list[Issue] = Field(
        default_factory=list,
        description="Coded findings, reported and not judged: reconciliation differences and "
        "reads outside the work directory.",
    )
    reverted: RevertReport | None = Field(
        default=None, description="What on_reject: revert restored (null when nothing ran)."
    )
    checks: list[CheckReport] = Field(
        default_factory=list,
        description="The task's own checks as the gate last ran them, at the final acceptance "
        "(the phases' checks are in each phase).",
        exclude_if=lambda checks: not checks,
    )
    check_ms: int = Field(
        default=0,
        description="Time the gate spent running checks over the run: the phases' check_ms "
        "plus the task's own checks'.",
        exclude_if=lambda check_ms: not check_ms,
    )
    checks_skipped: bool = Field(
        default=False,
        description="The task has checks and none was run, as the caller asked (a judgment "
        "without checks): its verdict rests on the other evidence alone.",
        exclude_if=lambda skipped: not skipped,
    )
    usage: Usage = Field(
        description="Tokens and cost of the run: the phases' usage, plus grader_usage, plus "
        "unattributed_usage."
    )
    grader_usage: Usage = Field(
        default_factory=Usage,
        description="Tokens and cost of the run's grader sessions (the separate sessions that "
        "judge rubric checks): the phases' grader_usage added; zero when no grader ran.",
    )
    unattributed_usage: Usage = Field(
        default_factory=Usage,
        description="Tokens and cost no phase owns: requests of the agent runtime that are not "
        "responses of the conversation (Claude Code's side requests), and responses no single "
        "phase owns (unstructured mode).",
    )
    usage_exact: bool = Field(
        default=True,
        description="Whether every response's final token count was seen; false for a saved "
        "transcript without partial messages, whose per-phase counts are the largest reported.",
    )
    overhead: GateOverhead = Field(
        default_factory=GateOverhead,
        description="The input the run's requests carried, and the gate's share of it: the "
        "phases' overhead plus that of requests no phase owns (unstructured mode).",
    )
    duration_ms: int
    error: str | None = Field(default=None, description="Why the run failed (verdict error).")
    session_id: str | None = Field(
        default=None, description="The agent session's id (the latest, after a restart)."
    )
    final_message: str | None = Field(
        default=None,
        description="The run's last word: the final result's text, else the last assistant "
        "text; null when there is none.",
    )
    transcript: Transcript | None = Field(default=None, exclude=True, repr=False)
    """The normalized transcript of the run (Python API only; not part of the JSON)."""

    @property
    def exit_code(self) -> int:
        """0 accepted, 1 rejected, 3 error: the exit codes of ``phasegate run``."""
        return exit_code_of(self.verdict)

    @property
    def kind(self) -> DefinitionKind:
        """``task`` (:class:`DefinitionReport`)."""
        return "task"

    @property
    def name(self) -> str:
        """The task's name (:class:`DefinitionReport`)."""
        return self.task

    @property
    def steps(self) -> list[PhaseReport]:
        """The phases (:class:`DefinitionReport`)."""
        return self.phases

    @property
    def issues(self) -> list[Issue]:
        """Every issue of every phase."""
        return [issue for phase in self.phases for issue in phase.issues]
