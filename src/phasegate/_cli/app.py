"""The ``phasegate`` command line.

Exit codes: 0 every phase accepted; 1 a phase was rejected; 2 bad input (task file,
arguments), with a message naming the file and field; 3 the agent or its infrastructure
failed. Progress goes to stderr, results to stdout, so ``--json`` output can be piped.
"""

from __future__ import annotations

import contextlib
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

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
from phasegate._cli.pipeline import app as pipeline_app
from phasegate._cli.report import report_command
from phasegate.errors import PhasegateError, UsageError

if TYPE_CHECKING:
    from phasegate.sdk.agents.protocol import Agent
    from phasegate.sdk.tasks.report import RunReport
    from phasegate.sdk.telemetry.events import EventSink, RunEvent
    from phasegate.sdk.telemetry.log import LogFormat

# Heavier modules (pydantic models, jsonschema, structlog) are imported inside the commands
# that use them: `phasegate --help` and `phasegate report` stay fast.

app = typer.Typer(
    name="phasegate",
    help="Make coding agents do structured, phased work, and prove they did it.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


class ModeOption(StrEnum):
    """Values of ``--mode``."""

    gate = "gate"
    single_query = "single-query"
    unstructured = "unstructured"


class LogFormatOption(StrEnum):
    """Values of ``--log-format``."""

    json = "json"
    console = "console"


@app.command()
def check(
    task_file: Annotated[Path, typer.Argument(metavar="TASK", help="Task file (YAML or JSON).")],
    mode: Annotated[ModeOption, typer.Option(help="Which prompt to show.")] = ModeOption.gate,
    prompts_dir: PromptsDir = None,
) -> None:
    """Validate a task file and print the prompt it would send (runs no agent)."""
    from phasegate.phases.loading import load_task
    from phasegate.prompts.phased import phased_prompt, unstructured_prompt
    from phasegate.prompts.templates import PromptTemplates

    task = load_task(task_file)
    templates = PromptTemplates(prompts_dir)
    build = unstructured_prompt if mode is ModeOption.unstructured else phased_prompt
    typer.echo(build(task, templates), nl=False)
    typer.echo(f"{task_file}: valid task {task.name!r} with {len(task.phases)} phase(s)", err=True)


@app.command()
def run(
    task_file: Annotated[Path, typer.Argument(metavar="TASK", help="Task file (YAML or JSON).")],
    workdir: Workdir = Path(),
    mode: Annotated[
        ModeOption, typer.Option(help="gate, single-query or unstructured.")
    ] = ModeOption.gate,
    max_attempts: Annotated[int, typer.Option(min=1, help="Gate checks per run (gate mode).")] = 3,
    agent: Annotated[
        AgentOption, typer.Option(help="Which agent runs the task.")
    ] = AgentOption.claude,
    script: Script = None,
    model: Model = None,
    timeout: Annotated[
        float, typer.Option(min=1, help="Seconds the whole run may take, retries included.")
    ] = 1800.0,
    cli_path: CliPath = None,
    max_cost: Annotated[
        float | None, typer.Option(min=0, help="Stop the run once it has cost this many USD.")
    ] = None,
    retries: Retries = 2,
    json_output: JsonOutput = False,
    quiet: Quiet = False,
    prompts_dir: PromptsDir = None,
    log_file: LogFile = None,
    log_format: Annotated[
        LogFormatOption, typer.Option(help="json (one object a line) or console.")
    ] = LogFormatOption.json,
    otel: Annotated[
        bool,
        typer.Option(help="Export spans and metrics to OpenTelemetry (needs phasegate\\[otel])."),
    ] = False,
) -> None:
    """Run a phased task with an agent and gate every phase on evidence.

    The Claude Code agent (the default) uses ANTHROPIC_API_KEY or a Claude Code login and
    honours ANTHROPIC_BASE_URL.
    """
    from phasegate.phases.loading import load_task
    from phasegate.sdk.agents.retry import RetryPolicy
    from phasegate.sdk.tasks.runner import Runner

    task = load_task(task_file)
    if agent is AgentOption.scripted:
        chosen = scripted_agent(script)
    else:
        from phasegate.sdk.agents.claude.adapter import ClaudeAgent

        chosen = ClaudeAgent(
            model=model, timeout=timeout, cli_path=cli_path, max_budget_usd=max_cost
        )
    with contextlib.ExitStack() as stack:
        sink = event_sink(
            stack,
            quiet=quiet,
            log_file=log_file,
            log_format="console" if log_format is LogFormatOption.console else "json",
            otel=otel,
        )
        runner = Runner(
            chosen,
            mode=mode.value,
            max_attempts=max_attempts,
            prompts_dir=prompts_dir,
            on_event=sink,
            retry=RetryPolicy(session_retries=retries, max_total=timeout),
            timeout=timeout,
        )
        report = runner.run_sync(task, workdir)
    if json_output:
        typer.echo(report.model_dump_json(indent=2))
    else:
        typer.echo(format_report(report))
    raise typer.Exit(report.exit_code)


@app.command("judge")
def judge_command(
    task_file: Annotated[Path, typer.Argument(metavar="TASK", help="Task file (YAML or JSON).")],
    transcript: Annotated[
        Path,
        typer.Option(
            "--transcript",
            "-t",
            help="Saved stream-json transcript (claude -p --output-format stream-json --verbose).",
        ),
    ],
    workdir: Annotated[
        Path, typer.Option("--workdir", "-w", help="Checkout of the repository the run changed.")
    ] = Path(),
    before: Annotated[
        str, typer.Option("--before", help="Git revision the run started from.")
    ] = "HEAD",
    json_output: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Judge a saved Claude Code transcript against a task, with no agent run.

    Disk changes are what git shows in WORKDIR since --before. Same report and exit codes
    as `run`.
    """
    from phasegate.phases.loading import load_task
    from phasegate.sdk.tasks.saved import judge_transcript, read_transcript

    task = load_task(task_file)
    entries, skipped = read_transcript(transcript)
    if skipped:
        typer.echo(
            f"phasegate: {transcript}: skipped {skipped} line(s) that are not JSON", err=True
        )
    report = judge_transcript(task, entries, workdir, before=before)
    typer.echo(report.model_dump_json(indent=2) if json_output else format_report(report))
    raise typer.Exit(report.exit_code)


@app.command()
def demo(
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress lines on stderr.")
    ] = False,
) -> None:
    """Offline, no key: the same lazy model, without and with the gate."""
    from phasegate._cli.demo import run_demo

    raise typer.Exit(run_demo(echo=typer.echo, progress=None if quiet else print_progress))


app.command("report")(report_command)
app.add_typer(pipeline_app, name="pipeline")


def scripted_agent(script: Path | None, *, continue_script: bool = False) -> Agent:
    """The in-process scripted agent for ``--agent scripted --script FILE``."""
    from phasegate.testing.script import load_script
    from phasegate.testing.scripted_agent import ScriptedAgent

    if script is None:
        raise UsageError("--agent scripted needs --script FILE (a script of model replies)")
    return ScriptedAgent(load_script(script), continue_script=continue_script)


def event_sink(
    stack: contextlib.ExitStack,
    *,
    quiet: bool,
    log_file: Path | None,
    log_format: LogFormat = "json",
    otel: bool = False,
) -> EventSink | None:
    """Where a command's events go: progress lines (unless ``quiet``), the log file (closed
    with ``stack``), OpenTelemetry."""
    from phasegate.sdk.telemetry.events import fan_out

    sinks: list[EventSink] = [] if quiet else [print_progress]
    if log_file is not None:
        from phasegate.sdk.telemetry.log import EventLog

        log = EventLog(file=log_file, log_format=log_format)
        stack.callback(log.close)
        sinks.append(log)
    if otel:
        from phasegate.sdk.telemetry.otel import OtelSink

        sinks.append(OtelSink())
    return fan_out(sinks)


def format_report(report: RunReport) -> str:
    """A short human-readable account of a run."""
    lines = [
        f"{report.task}: {report.verdict.upper()} ({report.mode}, {report.attempts} gate check(s))"
    ]
    for phase in report.phases:
        tools = (
            ", ".join(f"{name}×{count}" for name, count in sorted(phase.tools.items()))
            or "no tools"
        )
        how = f" by {phase.completed_by}" if phase.completed_by else ""
        lines.append(
            f"  phase {phase.index} {phase.name}: {phase.status}{how} after {phase.attempts} "
            f"check(s); {tools}; files changed: {', '.join(phase.files_changed) or 'none'}"
        )
        lines.extend(f"    - {issue.code.value}: {issue.message}" for issue in phase.issues)
    lines.append(f"  files changed: {', '.join(report.files_changed) or 'none'}")
    if report.files_claimed:
        lines.append(f"  files claimed: {', '.join(report.files_claimed)}")
    lines.extend(f"  ! {finding.code.value}: {finding.message}" for finding in report.findings)
    if report.reverted is not None:
        reverted = report.reverted
        lines.append(
            f"  reverted: restored {', '.join(reverted.restored) or 'nothing'}; "
            f"removed {', '.join(reverted.removed) or 'nothing'}"
            + (f"; FAILED {', '.join(reverted.failed)}" if reverted.failed else "")
        )
    if report.retries or report.api_retries:
        lines.append(f"  retries: {report.retries} session(s), {report.api_retries} API request(s)")
    if report.error:
        lines.append(f"  error: {report.error}")
    return "\n".join(lines)


def print_progress(event: RunEvent) -> None:
    """Write the progress line of ``event`` (if it has one) to stderr."""
    line = progress_line(event)
    if line is not None:
        typer.echo(line, err=True)


def progress_line(event: RunEvent) -> str | None:
    """One stderr line for the events a person watching a run cares about."""
    from phasegate.sdk.telemetry import pipeline_events as p
    from phasegate.sdk.telemetry import task_events as t

    match event.data:
        case t.RunStarted(phases=phases, agent=agent):
            return f"▶ {event.task}: {phases} phase(s), mode {event.mode}, agent {agent}"
        case t.ToolCalled(tool=tool, ok=ok):
            return f"  · {tool} {'ok' if ok else 'FAILED'}"
        case t.PhaseMarker(phase=phase, name=name, text=text, source=source):
            via = " (phase_complete)" if source == "tool" else ""
            return f"  ✎ phase {phase} ({name}) claimed complete{via}: {text}"
        case t.PhaseGateChecked(accepted=False) as gate:
            what = f"{gate.tool} call" if gate.trigger == "tool" else f"gate check {gate.attempt}"
            return f"  ✗ {what}: phase {gate.phase} ({gate.name}): {', '.join(gate.issues)}"
        case t.RetryScheduled(attempt=attempt, source=source, delay_ms=delay, reason=reason):
            return f"  ↻ retry {attempt} ({source}) in {delay} ms: {reason}"
        case t.RunCompleted(verdict=verdict, attempts=attempts, duration_ms=ms):
            return f"■ {verdict} after {attempts} gate check(s) in {ms} ms"
        case p.PipelineStarted(stages=stages, stage=stage, resumed=resumed, agent=agent):
            how = "resuming at stage" if resumed else "starting at stage"
            return f"▶ {event.task}: {stages} stage(s), {how} {stage}, agent {agent}"
        case p.PipelineResumed(stage=stage, name=name, how=how):
            where = "the saved session" if how == "session" else "a fresh session with a recap"
            return f"↻ resuming stage {stage} ({name}) in {where}"
        case p.StageStarted(stage=stage, name=name, visit=visit):
            again = f" (visit {visit})" if visit > 1 else ""
            return f"» stage {stage} {name}{again}"
        case p.StageChecked(passed=False, attempt=attempt, name=name, failed=failed):
            return f"  ✗ check {attempt}: stage {name}: failed {', '.join(failed)}"
        case p.StageCompleted(status=status, name=name, attempts=attempts) if status != "pending":
            mark = "✓" if status == "accepted" else "✗"
            return f"  {mark} stage {name} {status} after {attempts} check(s)"
        case p.StageRevision(name=name, to_name=to_name):
            return f"  ↺ stage {name} sends the pipeline back to {to_name}"
        case p.PipelineCompleted(verdict=verdict, stages_accepted=accepted, duration_ms=ms):
            return f"■ {verdict}: {accepted} stage(s) accepted in {ms} ms"
    return None


def main() -> NoReturn:
    """Console entry point: phasegate errors become a message and an exit code, not a trace."""
    try:
        # Outside standalone mode, click returns a command's exit code instead of exiting.
        code = app(standalone_mode=False)
    except PhasegateError as exc:
        typer.echo(f"phasegate: error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        typer.echo("phasegate: interrupted", err=True)
        sys.exit(130)
    except typer.TyperException as exc:  # click's usage errors: bad option, missing argument
        show = getattr(exc, "show", None)
        if callable(show):
            show()
        else:
            typer.echo(f"phasegate: error: {exc}", err=True)
        sys.exit(getattr(exc, "exit_code", 2))
    sys.exit(code if isinstance(code, int) else 0)
