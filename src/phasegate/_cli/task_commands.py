"""``phasegate check | run | judge | demo``: one phased task from the command line."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from phasegate._cli.options import (
    AgentChoice,
    AgentOptions,
    CliPath,
    FilesRoot,
    GraderMaxCost,
    GraderModel,
    GraderTurns,
    JsonOutput,
    LogFile,
    LogFormatChoice,
    MaxAttempts,
    MaxCost,
    Model,
    ModelScript,
    Otel,
    OutputOptions,
    PromptsDir,
    Quiet,
    Record,
    Retries,
    RunMode,
    RunTimeout,
    SandboxSwitch,
    Script,
    TaskFile,
    Workdir,
    grader_settings,
    sandbox_default,
)
from phasegate._cli.output import (
    finish,
    format_report,
    print_progress,
    print_recording,
    print_result,
    recording_folder,
)
from phasegate._cli.wiring import build_agent, event_sink, prompt_files, refuse_log_over_inputs
from phasegate.errors import ResultOnlyTranscriptError
from phasegate.modes import DEFAULT_MAX_ATTEMPTS, Mode

if TYPE_CHECKING:
    from phasegate.evidence.saved_transcript import ReadStats


def check(
    task_file: TaskFile,
    mode: Annotated[Mode, typer.Option(help="Which prompt to show.")] = "gate",
    prompts_dir: PromptsDir = None,
    files_root: FilesRoot = None,
) -> None:
    """Validate a task file and print the prompt it would send (runs no agent).

    On stderr: the checks each check written as a sentence became, and a warning when a
    command check runs while the task protects nothing.
    """
    from phasegate._cli.pipeline import task_sentence_lines
    from phasegate.phases.loading import load_task
    from phasegate.phases.model import unguarded_oracles
    from phasegate.prompts.templates import PromptTemplates
    from phasegate.tasks.request import first_prompt

    task = load_task(task_file, files_root=files_root)
    print_result(first_prompt(task, mode, PromptTemplates(prompts_dir)), nl=False)
    for line in task_sentence_lines(task):
        typer.echo(line, err=True)
    for warning in unguarded_oracles(task):
        typer.echo(f"{task_file}: warning: {warning}", err=True)
    typer.echo(f"{task_file}: valid task {task.name!r} with {len(task.phases)} phase(s)", err=True)


def run(
    task_file: TaskFile,
    workdir: Workdir = Path(),
    mode: RunMode = "gate",
    max_attempts: MaxAttempts = DEFAULT_MAX_ATTEMPTS,
    agent: AgentChoice = "claude",
    script: Script = None,
    model_script: ModelScript = None,
    model: Model = None,
    timeout: RunTimeout = 1800.0,
    cli_path: CliPath = None,
    max_cost: MaxCost = None,
    retries: Retries = 2,
    json_output: JsonOutput = False,
    quiet: Quiet = False,
    prompts_dir: PromptsDir = None,
    files_root: FilesRoot = None,
    log_file: LogFile = None,
    log_format: LogFormatChoice = "json",
    otel: Otel = False,
    record: Record = None,
    sandbox: SandboxSwitch = None,
    grader_model: GraderModel = None,
    grader_turns: GraderTurns = None,
    grader_max_cost: GraderMaxCost = None,
) -> None:
    """Run a phased task with an agent and gate every phase on evidence.

    The Claude Code agent (the default) uses ANTHROPIC_API_KEY or a Claude Code login and
    honours ANTHROPIC_BASE_URL.
    """
    import asyncio

    from phasegate.phases.loading import load_task
    from phasegate.running import RunOptions, run_definition

    task = load_task(task_file, files_root=files_root)
    refuse_log_over_inputs(log_file, [task_file, script, model_script, *prompt_files(prompts_dir)])
    folder = recording_folder(record)
    agent_options = AgentOptions(
        agent,
        script=script,
        model_script=model_script,
        model=model,
        timeout=timeout,
        cli_path=cli_path,
        max_cost=max_cost,
        sandbox=sandbox,
        grader=grader_settings(grader_model, grader_turns, grader_max_cost),
    )
    output = OutputOptions(quiet=quiet, log_file=log_file, log_format=log_format, otel=otel)
    with contextlib.ExitStack() as stack:
        options = RunOptions(
            mode=mode, max_attempts=max_attempts, timeout=timeout, retries=retries,
            prompts_dir=prompts_dir, on_event=event_sink(stack, output), record=folder,
            sandbox=agent_options.sandbox_mode, sandbox_default=sandbox_default(),
            grader=agent_options.grader,
        )  # fmt: skip
        agent_built = build_agent(stack, agent_options)
        report = asyncio.run(run_definition(task, workdir, agent_built, options))
    print_recording(folder)
    finish(report, json_output=json_output, human=format_report)


def judge(
    task_file: TaskFile,
    transcript: Annotated[
        Path,
        typer.Option(
            "--transcript",
            "-t",
            help="Saved transcript: stream-json lines (claude -p --output-format stream-json "
            "--verbose), a JSON array of messages (claude-code-action's execution file), "
            "pretty-printed messages, or a Claude Code session log (its subagent files "
            "beside it are read too).",
        ),
    ],
    workdir: Annotated[
        Path, typer.Option("--workdir", "-w", help="Checkout of the repository the run changed.")
    ] = Path(),
    before: Annotated[
        str, typer.Option("--before", help="Git revision the run started from.")
    ] = "HEAD",
    cwd: Annotated[
        str | None,
        typer.Option(
            "--cwd",
            help="Working directory the run had, which tool paths are relative to "
            "(default: the one the transcript records, else WORKDIR).",
        ),
    ] = None,
    json_output: JsonOutput = False,
    files_root: FilesRoot = None,
    log_file: LogFile = None,
    log_format: LogFormatChoice = "json",
    record: Record = None,
    no_checks: Annotated[
        bool,
        typer.Option(
            "--no-checks",
            help="Judge without running the task's checks (the report says they were skipped).",
        ),
    ] = False,
) -> None:
    """Judge a saved Claude Code transcript against a task, with no agent run.

    Disk changes are what git shows in WORKDIR since --before; the task's checks run in
    WORKDIR as it is now (--no-checks: none run). Same report and exit codes as `run`;
    --log-file logs the judged run as a run would (run.started, check.ran, phase.completed,
    run.completed), so `phasegate report` counts it.
    """
    from phasegate.phases.loading import load_task
    from phasegate.tasks.saved import judge_transcript, read_transcript

    task = load_task(task_file, files_root=files_root)
    try:
        entries, stats = read_transcript(transcript)
    except ResultOnlyTranscriptError as exc:
        if json_output:  # what the result records is still worth a script's while
            typer.echo(json.dumps(_result_figures(exc)))
        raise
    for warning in transcript_warnings(transcript, stats, entries.cwd, cwd):
        typer.echo(f"phasegate: {warning}", err=True)
    refuse_log_over_inputs(log_file, [task_file, transcript])
    folder = recording_folder(record)
    with contextlib.ExitStack() as stack:
        output = OutputOptions(quiet=True, log_file=log_file, log_format=log_format)
        report = judge_transcript(
            task,
            entries,
            workdir,
            before=before,
            cwd=cwd,
            transcript_file=transcript,
            on_event=event_sink(stack, output),
            record=folder,
            run_checks=not no_checks,
        )
    print_recording(folder)
    finish(report, json_output=json_output, human=format_report)


def _result_figures(error: ResultOnlyTranscriptError) -> dict[str, object]:
    """The ``--json`` answer for a transcript that is a run's result alone."""
    return {
        "error": str(error),
        "cost_usd": error.cost_usd,
        "num_turns": error.num_turns,
        "duration_ms": error.duration_ms,
    }


def transcript_warnings(
    path: Path, stats: ReadStats, recorded: str | None, cwd: str | None
) -> list[str]:
    """What ``judge`` says on stderr about the transcript it read."""
    warnings = []
    if stats.not_json:
        warnings.append(f"{path}: skipped {stats.not_json} line(s) that are not JSON")
    if stats.unrecognised:
        where = "line" if stats.shape == "json-lines" else "element"
        warnings.append(
            f"{path}: skipped {stats.unrecognised} JSON value(s) that are not Claude Code "
            f"messages, e.g. {where} {stats.example_at}: {stats.example}"
        )
    if cwd is not None and recorded is not None and cwd != recorded:
        warnings.append(f"{path} records the working directory {recorded}; using --cwd {cwd}")
    if cwd is None and recorded is None:
        warnings.append(
            f"{path} records no working directory; tool paths are taken relative to --workdir "
            "(give the run's own with --cwd)"
        )
    return warnings


def demo(quiet: Quiet = False) -> None:
    """Offline, no key: the same lazy model, without and with the gate."""
    from phasegate._cli.demo import run_demo

    raise typer.Exit(run_demo(echo=typer.echo, progress=None if quiet else print_progress))
