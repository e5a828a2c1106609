"""``phasegate pipeline check | run | resume``: multi-stage pipelines from the command line.

Exit codes as ``phasegate run``: 0 every stage accepted; 1 a stage was rejected for good;
2 bad input (pipeline file, state file, arguments); 3 the agent or its infrastructure failed
(the run can be resumed).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from phasegate._cli.options import (
    AgentOption,
    CliPath,
    JsonOutput,
    LogFile,
    Model,
    PromptsDir,
    Quiet,
    Retries,
    Script,
    Workdir,
)
from phasegate.errors import UsageError

if TYPE_CHECKING:
    from phasegate.sdk.agents.protocol import Agent
    from phasegate.sdk.pipelines.report import PipelineReport
    from phasegate.sdk.pipelines.runner import PipelineRunner

app = typer.Typer(
    name="pipeline",
    help="Multi-stage pipelines: stages gated on exit checks, in one agent session.",
    no_args_is_help=True,
)


class IsolationOption(StrEnum):
    """Values of ``--isolation``."""

    session = "session"
    process = "process"


PipelineFile = Annotated[
    Path, typer.Argument(metavar="PIPELINE", help="Pipeline file (YAML or JSON).")
]
AgentChoice = Annotated[AgentOption, typer.Option("--agent", help="Which agent runs the stages.")]
ModelScript = Annotated[
    Path | None,
    typer.Option(
        "--model-script",
        help="Run the real Claude Code CLI offline against phasegate's scripted model server, "
        "replaying this script (no key, no network).",
    ),
]
Timeout = Annotated[
    float, typer.Option(min=1, help="Seconds this run (or resume) may take, retries included.")
]


@app.command("check")
def check_command(
    pipeline_file: PipelineFile,
    prompts_dir: PromptsDir = None,
) -> None:
    """Validate a pipeline file and print each stage's prompt (runs no agent)."""
    from phasegate.phases.pipeline import load_pipeline
    from phasegate.prompts.stages import stage_prompt
    from phasegate.prompts.templates import PromptTemplates

    pipeline = load_pipeline(pipeline_file)
    templates = PromptTemplates(prompts_dir)
    for index in range(len(pipeline.stages)):
        typer.echo(stage_prompt(pipeline, index, templates) + "\n")
    typer.echo(
        f"{pipeline_file}: valid pipeline {pipeline.name!r} with {len(pipeline.stages)} stage(s)",
        err=True,
    )


@app.command("run")
def run_command(
    pipeline_file: PipelineFile,
    workdir: Workdir = Path(),
    isolation: Annotated[
        IsolationOption,
        typer.Option(help="session: all stages in one agent session; process: one per stage."),
    ] = IsolationOption.session,
    restart: Annotated[
        bool,
        typer.Option(
            "--restart", help="Start over even if the work directory holds an unfinished run."
        ),
    ] = False,
    agent: AgentChoice = AgentOption.claude,
    script: Script = None,
    model_script: ModelScript = None,
    model: Model = None,
    timeout: Timeout = 3600.0,
    cli_path: CliPath = None,
    retries: Retries = 2,
    json_output: JsonOutput = False,
    quiet: Quiet = False,
    prompts_dir: PromptsDir = None,
    log_file: LogFile = None,
) -> None:
    """Run a pipeline: each stage's exit checks gate the next stage.

    State goes to WORKDIR/.phasegate/pipeline-state.json after every transition; an
    interrupted run continues with `phasegate pipeline resume`.
    """
    from phasegate.phases.pipeline import load_pipeline

    pipeline = load_pipeline(pipeline_file)
    with _runner(
        agent, script, model_script, model, timeout, cli_path, retries, quiet, prompts_dir,
        log_file, isolation.value,
    ) as runner:  # fmt: skip
        report = runner.run_sync(pipeline, workdir, restart=restart)
    _finish(report, json_output)


@app.command("resume")
def resume_command(
    pipeline_file: PipelineFile,
    workdir: Workdir = Path(),
    agent: AgentChoice = AgentOption.claude,
    script: Script = None,
    model_script: ModelScript = None,
    model: Model = None,
    timeout: Timeout = 3600.0,
    cli_path: CliPath = None,
    retries: Retries = 2,
    json_output: JsonOutput = False,
    quiet: Quiet = False,
    prompts_dir: PromptsDir = None,
    log_file: LogFile = None,
) -> None:
    """Continue an interrupted pipeline run from the stage it was in.

    Stages already accepted are not redone. The agent's session is resumed where the agent
    supports it (Claude Code keeps sessions in its config directory); otherwise a fresh
    session starts with a recap. The isolation of the original run is kept.
    """
    from phasegate.phases.pipeline import load_pipeline
    from phasegate.sdk.pipelines.state import load_state

    pipeline = load_pipeline(pipeline_file)
    isolation = load_state(workdir.resolve()).isolation  # a bad state file fails here, early
    with _runner(
        agent, script, model_script, model, timeout, cli_path, retries, quiet, prompts_dir,
        log_file, isolation,
    ) as runner:  # fmt: skip
        report = runner.resume_sync(pipeline, workdir)
    _finish(report, json_output)


@contextlib.contextmanager
def _runner(
    agent: AgentOption,
    script: Path | None,
    model_script: Path | None,
    model: str | None,
    timeout: float,
    cli_path: Path | None,
    retries: int,
    quiet: bool,
    prompts_dir: Path | None,
    log_file: Path | None,
    isolation: str,
) -> Iterator[PipelineRunner]:
    """The runner the options describe, with its model server and log open while it runs."""
    from phasegate._cli.app import event_sink
    from phasegate.sdk.agents.retry import RetryPolicy
    from phasegate.sdk.pipelines.runner import PipelineRunner

    with contextlib.ExitStack() as stack:
        chosen = _agent(stack, agent, script, model_script, model, timeout, cli_path, isolation)
        yield PipelineRunner(
            chosen,
            isolation="process" if isolation == "process" else "session",
            prompts_dir=prompts_dir,
            on_event=event_sink(stack, quiet=quiet, log_file=log_file),
            retry=RetryPolicy(session_retries=retries, max_total=timeout),
            timeout=timeout,
        )


def _agent(
    stack: contextlib.ExitStack,
    agent: AgentOption,
    script: Path | None,
    model_script: Path | None,
    model: str | None,
    timeout: float,
    cli_path: Path | None,
    isolation: str,
) -> Agent:
    if agent is AgentOption.scripted:
        if model_script is not None:
            raise UsageError("--model-script runs the real CLI: drop --agent scripted")
        from phasegate._cli.app import scripted_agent

        return scripted_agent(script, continue_script=isolation == "process")
    if script is not None:
        raise UsageError("--script is for --agent scripted; for the real CLI use --model-script")
    from phasegate.sdk.agents.claude.adapter import ClaudeAgent

    if model_script is None:
        return ClaudeAgent(model=model, timeout=timeout, cli_path=cli_path)
    from phasegate.testing.model_server import ScriptedModelServer

    server = stack.enter_context(ScriptedModelServer(model_script))
    return server.claude_agent(timeout=timeout, cli_path=cli_path)


def _finish(report: PipelineReport, json_output: bool) -> None:
    typer.echo(report.model_dump_json(indent=2) if json_output else format_pipeline(report))
    raise typer.Exit(report.exit_code)


def format_pipeline(report: PipelineReport) -> str:
    """A short human-readable account of a pipeline run."""
    from phasegate.metrics.formatting import duration

    sessions = f"{report.sessions} session(s)" + (
        f", resumed {report.resumes}×" if report.resumes else ""
    )
    lines = [
        f"{report.pipeline}: {report.verdict.upper()} ({report.isolation} isolation, {sessions}, "
        f"{duration(report.duration_ms)})"
    ]
    for stage in report.stages:
        visits = f", {stage.visits} visits" if stage.visits > 1 else ""
        lines.append(
            f"  stage {stage.index} {stage.name}: {stage.status} after {stage.attempts} "
            f"check(s){visits}, {duration(stage.duration_ms)}"
        )
        for check in stage.checks:
            mark = "✓" if check.ok else "✗"
            detail = check.detail.splitlines()[0] if check.detail else ""
            lines.append(f"    {mark} {check.description}" + ("" if check.ok else f": {detail}"))
    for revision in report.revisions:
        lines.append(f"  ↺ {revision.from_stage} sent the pipeline back to {revision.to_stage}")
    if report.error:
        lines.append(f"  error: {report.error}")
    lines.append(f"  state: {report.state_file}")
    return "\n".join(lines)
