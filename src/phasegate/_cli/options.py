"""Command-line options shared by the commands, and the settings they add up to.

Choices are the library's own Literals (``Mode``, ``Isolation``, ``LogFormat``), so a new
mode shows up in ``--help`` without a second list to keep in step.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal, cast

import typer

from phasegate.errors import UsageError
from phasegate.modes import LogFormat, Mode
from phasegate.phases.sandbox import SandboxMode

if TYPE_CHECKING:
    from phasegate.phases.grader import GraderSettings

AgentName = Literal["claude", "scripted"]
"""Values of ``--agent``: the Claude Code CLI, or phasegate's in-process scripted agent."""

TaskFile = Annotated[Path, typer.Argument(metavar="TASK", help="Task file (YAML or JSON).")]
PromptsDir = Annotated[
    Path | None,
    typer.Option(
        "--prompts-dir",
        envvar="PHASEGATE_PROMPTS_DIR",
        help="Directory whose template files replace the bundled prompt templates.",
    ),
]
FilesRoot = Annotated[
    Path | None,
    typer.Option(
        "--files-root",
        help="Folder the files a task or pipeline names (prompt files, schemas, $ref) must lie "
        "in (default: the task or pipeline file's folder).",
    ),
]
Workdir = Annotated[Path, typer.Option("--workdir", "-w", help="Directory the agent works in.")]
AgentChoice = Annotated[AgentName, typer.Option("--agent", help="Which agent does the work.")]
Script = Annotated[
    Path | None, typer.Option("--script", help="Script of model replies, for --agent scripted.")
]
ModelScript = Annotated[
    Path | None,
    typer.Option(
        "--model-script",
        help="Run the real Claude Code CLI offline against phasegate's scripted model server, "
        "replaying this script (no key, no network).",
    ),
]
Model = Annotated[str | None, typer.Option(help="Claude model name (claude agent).")]
CliPath = Annotated[
    Path | None, typer.Option(help="Claude Code CLI to run instead of the bundled one.")
]
Retries = Annotated[
    int, typer.Option(min=0, help="Session restarts after a transient failure (API, crash).")
]
MaxParallel = Annotated[
    int | None,
    typer.Option(
        min=1,
        help="Pipelines: the most stages that run at once (default: the pipeline's "
        "max_parallel, else as many as the stages' needs allow).",
    ),
]
GraderModel = Annotated[
    str | None,
    typer.Option(
        "--grader-model",
        help="The model that grades rubric checks (docs/grader.md; default: the file's "
        "grader: model, else haiku).",
    ),
]
GraderTurns = Annotated[
    int | None,
    typer.Option("--grader-turns", min=1, max=100, help="Model turns one grader session may take."),
]
GraderMaxCost = Annotated[
    float | None,
    typer.Option("--grader-max-cost", min=0.0001, help="What one grader session may cost, in USD."),
]
RunMode = Annotated[Mode, typer.Option(help="How the task is run and judged.")]
MaxAttempts = Annotated[int, typer.Option(min=1, help="Gate checks per run (gate mode).")]
RunTimeout = Annotated[
    float, typer.Option(min=1, help="Seconds the whole run may take, retries included.")
]
MaxCost = Annotated[
    float | None, typer.Option(min=0, help="Stop the run once it has cost this many USD.")
]
JsonOutput = Annotated[bool, typer.Option("--json", help="Print the report as JSON.")]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines on stderr.")]
LogFile = Annotated[
    Path | None,
    typer.Option(help="Append every event to this file, one JSON line each (docs/events.md)."),
]
Record = Annotated[
    Path | None,
    typer.Option(
        "--record",
        metavar="DIR",
        help="Write the run's recording into this folder when it ends: the report, the "
        "transcript, every gate check with its feedback, a diff per part (docs/recordings.md). "
        "An earlier recording there is replaced; any other non-empty folder is refused.",
    ),
]
LogFormatChoice = Annotated[LogFormat, typer.Option(help="json (one object a line) or console.")]
SandboxSwitch = Annotated[
    bool | None,
    typer.Option(
        "--sandbox/--no-sandbox",
        help="Confine the agent in Claude Code's sandbox (docs/sandbox.md): its commands write "
        "only in the work directory, never under protect, and reach only the hosts sandbox: "
        "network: lists; exit 2 when it cannot run here. Default: as the file's sandbox: says, "
        "else off.",
    ),
]
Otel = Annotated[
    bool,
    typer.Option(help="Export spans and metrics to OpenTelemetry (needs phasegate\\[otel])."),
]

FLAGS = {
    "before": "--before",
    "cli_path": "--cli-path",
    "address": "--address",
    "concurrency": "--concurrency",
    "context": "--context",
    "cpus_per_unit": "--cpus-per-unit",
    "executor": "--executor",
    "exit_code": "--exit-code",
    "files_root": "--files-root",
    "inputs": "`phasegate plan` for what is missing, then `phasegate execute --responses`",
    "isolation": "--isolation",
    "max_attempts": "--max-attempts",
    "max_budget_usd": "--max-cost",
    "max_iterations": "--max-iterations",
    "mode": "--mode",
    "out": "--out",
    "plan": "`phasegate plan` again, then `phasegate execute --plan`",
    "prompt": "PROMPT",
    "promise": "--promise",
    "record": "--record",
    "sandbox": "--sandbox / --no-sandbox",
    "prompts_dir": "--prompts-dir",
    "questions_per_turn": "--questions-per-turn",
    "responses": "--responses",
    "restart": "--restart",
    "timeout": "--timeout",
    "workdir": "--workdir",
}
"""The flag that sets each keyword argument a library error may name in ``option``."""


@dataclass(frozen=True, slots=True)
class AgentOptions:
    """What the agent options of a command ask for."""

    agent: AgentName
    script: Path | None
    model_script: Path | None
    model: str | None
    timeout: float
    cli_path: Path | None
    max_cost: float | None = None
    sandbox: bool | None = None
    """``--sandbox`` (True), ``--no-sandbox`` (False), neither (None: as the file says)."""
    grader: GraderSettings | None = None
    """The ``--grader-*`` options (None: none given; the file's ``grader:`` applies)."""

    @property
    def sandbox_mode(self) -> SandboxMode | None:
        """The sandbox switch as the run's override (``RunOptions.sandbox``)."""
        return sandbox_mode(self.sandbox)


SANDBOX_DEFAULT_VAR = "PHASEGATE_SANDBOX_DEFAULT"
"""The sandbox mode of a run whose file and flags say nothing (off, on, optional; default
off): the GitHub Action sets it to its ``sandbox`` input (docs/sandbox.md)."""


def sandbox_default() -> SandboxMode:
    """The mode :data:`SANDBOX_DEFAULT_VAR` names (``off`` when unset); a usage error for
    any other word."""
    word = os.environ.get(SANDBOX_DEFAULT_VAR, "").strip().lower() or "off"
    if word not in ("off", "on", "optional"):
        raise UsageError(f"{SANDBOX_DEFAULT_VAR}={word!r}: give off, on or optional (or unset it)")
    return cast("SandboxMode", word)


def sandbox_mode(switch: bool | None) -> SandboxMode | None:
    """``--sandbox`` (``on``), ``--no-sandbox`` (``off``) or neither (None: as the file says)."""
    return None if switch is None else "on" if switch else "off"


@dataclass(frozen=True, slots=True)
class OutputOptions:
    """Where a command's events go besides its report."""

    quiet: bool = False
    log_file: Path | None = None
    log_format: LogFormat = "json"
    otel: bool = False
    record: Path | None = None
    """The folder of the run's recording (checked already), or None."""


def grader_settings(
    model: str | None, turns: int | None, max_cost: float | None
) -> GraderSettings | None:
    """The grader settings the ``--grader-*`` options give (None: none given)."""
    if model is None and turns is None and max_cost is None:
        return None
    from phasegate.phases.grader import GraderSettings

    return GraderSettings(model=model, max_turns=turns, max_cost_usd=max_cost)
