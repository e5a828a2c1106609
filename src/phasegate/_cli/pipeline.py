"""``phasegate pipeline check | run | resume | convert``: multi-stage pipelines from the
command line. Each reads a phasegate pipeline file or pagent's ``.claude/pagent-pipeline.json``
(told apart by pagent's run-state keys or file name, or ``--format``).

Exit codes as ``phasegate run``: 0 every stage accepted; 1 a stage was rejected for good;
2 bad input (pipeline file, state file, arguments); 3 the agent or its infrastructure failed
(the run can be resumed).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

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
    MaxCost,
    MaxParallel,
    Model,
    ModelScript,
    OutputOptions,
    PromptsDir,
    Quiet,
    Record,
    Retries,
    SandboxSwitch,
    Script,
    Workdir,
    grader_settings,
    sandbox_default,
)
from phasegate._cli.output import (
    finish,
    format_pipeline,
    print_recording,
    print_result,
    recording_folder,
)
from phasegate._cli.wiring import build_agent, event_sink, prompt_files, refuse_log_over_inputs
from phasegate.modes import Isolation

if TYPE_CHECKING:
    from phasegate.phases.model import Task
    from phasegate.phases.pipeline import Pipeline
    from phasegate.pipelines.report import PipelineReport

app = typer.Typer(
    name="pipeline",
    help="Multi-stage pipelines: stages gated on exit checks, in one agent session.",
    no_args_is_help=True,
)

PipelineFile = Annotated[
    Path, typer.Argument(metavar="PIPELINE", help="Pipeline file (YAML or JSON).")
]
PipelineFormat = Literal["auto", "phasegate", "pagent"]
"""Values of ``--format`` (the library's ``PipelineFormat``; kept here so help stays fast)."""
Format = Annotated[
    PipelineFormat,
    typer.Option(
        "--format",
        help="auto: pagent's when it has pagent's run state (stage, max_stages, iterations) or "
        "is named pagent-pipeline.json; phasegate: a phasegate pipeline file; pagent: "
        "pagent's .claude/pagent-pipeline.json (prompt files read from the work directory).",
    ),
]
OptionalWorkdir = Annotated[
    Path | None,
    typer.Option(
        "--workdir",
        "-w",
        help="Work directory a pagent file's prompt files are read from (default: the folder "
        "holding its .claude/, else the current directory).",
    ),
]
Timeout = Annotated[
    float, typer.Option(min=1, help="Seconds this run (or resume) may take, retries included.")
]


@app.command("check")
def check_command(
    pipeline_file: PipelineFile,
    prompts_dir: PromptsDir = None,
    files_root: FilesRoot = None,
    file_format: Format = "auto",
    workdir: OptionalWorkdir = None,
) -> None:
    """Validate a pipeline file and print each stage's prompt (runs no agent), then (on
    stderr) the checks each condition written as a sentence became, and its stages as a
    graph: levels, branches, joins."""
    from phasegate.prompts.stages import stage_prompt
    from phasegate.prompts.templates import PromptTemplates

    pipeline = _load(pipeline_file, workdir or _home_of(pipeline_file), files_root, file_format)
    templates = PromptTemplates(prompts_dir)
    for index in range(len(pipeline.stages)):
        print_result(stage_prompt(pipeline, index, templates) + "\n")
    for line in sentence_lines(pipeline):
        typer.echo(line, err=True)
    for line in pipeline.graph.outline(pipeline.max_parallel):
        typer.echo(line, err=True)
    typer.echo(
        f"{pipeline_file}: valid pipeline {pipeline.name!r} with {len(pipeline.stages)} stage(s)",
        err=True,
    )


@app.command("run")
def run_command(
    pipeline_file: PipelineFile,
    workdir: Workdir = Path(),
    isolation: Annotated[
        Isolation,
        typer.Option(help="session: all stages in one agent session; process: one per stage."),
    ] = "session",
    restart: Annotated[
        bool,
        typer.Option(
            "--restart", help="Start over even if the work directory holds an unfinished run."
        ),
    ] = False,
    agent: AgentChoice = "claude",
    script: Script = None,
    model_script: ModelScript = None,
    model: Model = None,
    timeout: Timeout = 3600.0,
    cli_path: CliPath = None,
    max_cost: MaxCost = None,
    retries: Retries = 2,
    json_output: JsonOutput = False,
    quiet: Quiet = False,
    prompts_dir: PromptsDir = None,
    files_root: FilesRoot = None,
    log_file: LogFile = None,
    file_format: Format = "auto",
    record: Record = None,
    sandbox: SandboxSwitch = None,
    max_parallel: MaxParallel = None,
    grader_model: GraderModel = None,
    grader_turns: GraderTurns = None,
    grader_max_cost: GraderMaxCost = None,
) -> None:
    """Run a pipeline: each stage's exit checks gate the next stage.

    State goes to WORKDIR/.phasegate/pipeline-state.json after every transition; an
    interrupted run continues with `phasegate pipeline resume`. A pagent file
    (.claude/pagent-pipeline.json) runs as it is: its prompt files are read from WORKDIR.
    """
    agent_options = AgentOptions(agent, script=script, model_script=model_script, model=model,
                                 timeout=timeout, cli_path=cli_path, max_cost=max_cost,
                                 sandbox=sandbox,
                                 grader=grader_settings(grader_model, grader_turns,
                                                        grader_max_cost))  # fmt: skip
    _run_and_finish(
        pipeline_file, workdir, agent_options,
        OutputOptions(quiet=quiet, log_file=log_file, record=record),
        isolation=isolation, retries=retries, prompts_dir=prompts_dir, files_root=files_root,
        file_format=file_format, json_output=json_output, restart=restart,
        max_parallel=max_parallel,
    )  # fmt: skip


@app.command("resume")
def resume_command(
    pipeline_file: PipelineFile,
    workdir: Workdir = Path(),
    agent: AgentChoice = "claude",
    script: Script = None,
    model_script: ModelScript = None,
    model: Model = None,
    timeout: Timeout = 3600.0,
    cli_path: CliPath = None,
    max_cost: MaxCost = None,
    retries: Retries = 2,
    json_output: JsonOutput = False,
    quiet: Quiet = False,
    prompts_dir: PromptsDir = None,
    files_root: FilesRoot = None,
    log_file: LogFile = None,
    file_format: Format = "auto",
    record: Record = None,
    sandbox: SandboxSwitch = None,
    max_parallel: MaxParallel = None,
    grader_model: GraderModel = None,
    grader_turns: GraderTurns = None,
    grader_max_cost: GraderMaxCost = None,
) -> None:
    """Continue an interrupted pipeline run from the stage it was in.

    Stages already accepted are not redone. The agent's session is resumed where the agent
    supports it (Claude Code keeps sessions in its config directory); otherwise a fresh
    session starts with a recap. The isolation of the original run is kept.
    """
    agent_options = AgentOptions(agent, script=script, model_script=model_script, model=model,
                                 timeout=timeout, cli_path=cli_path, max_cost=max_cost,
                                 sandbox=sandbox,
                                 grader=grader_settings(grader_model, grader_turns,
                                                        grader_max_cost))  # fmt: skip
    _run_and_finish(
        pipeline_file, workdir, agent_options,
        OutputOptions(quiet=quiet, log_file=log_file, record=record),
        isolation=None, retries=retries, prompts_dir=prompts_dir, files_root=files_root,
        file_format=file_format, json_output=json_output, resume=True,
        max_parallel=max_parallel,
    )  # fmt: skip


@app.command("convert")
def convert_command(
    pipeline_file: PipelineFile,
    workdir: OptionalWorkdir = None,
    file_format: Format = "auto",
    files_root: FilesRoot = None,
) -> None:
    """Print the phasegate pipeline (YAML) equivalent to a pagent file, prompts inline.

    Save it, then add checks pagent has no words for (command, json_valid, changed) and run
    it with `phasegate pipeline run`.
    """
    from phasegate.phases.pipeline_yaml import pipeline_yaml

    pipeline = _load(pipeline_file, workdir or _home_of(pipeline_file), files_root, file_format)
    header = (
        f"Converted from {pipeline_file} by phasegate pipeline convert.\n"
        "Load it with: phasegate pipeline run FILE --workdir DIR"
    )
    print_result(pipeline_yaml(pipeline, header=header), nl=False)


def sentence_lines(pipeline: Pipeline) -> list[str]:
    """One line per condition written as a sentence, in a stage's ``exit_when`` or its task:
    ``stage architect: "a.md exists" → file_exists: a.md``."""
    lines: list[str] = []
    for stage in pipeline.stages:
        lines += [f"stage {stage.name}: {reading.describe()}" for reading in stage.sentences]
        if stage.task is not None:
            lines += task_sentence_lines(stage.task, f"stage {stage.name}, ")
    return lines


def task_sentence_lines(task: Task, prefix: str = "") -> list[str]:
    """One line per check written as a sentence in a task (its phases', then its own):
    ``phase 1 (build): "make passes" → command: [make]``."""
    lines: list[str] = []
    for number, phase in enumerate(task.phases, start=1):
        owner = f"{prefix}phase {number} ({phase.name})"
        lines += [f"{owner}: {reading.describe()}" for reading in phase.sentences]
    lines += [f"{prefix}task: {reading.describe()}" for reading in task.sentences]
    return lines


def _load(
    pipeline_file: Path,
    workdir: Path,
    files_root: Path | None,
    file_format: PipelineFormat,
    prompt_files: list[Path] | None = None,
) -> Pipeline:
    """The pipeline in ``pipeline_file``, in whichever format it is (the pagent prompt files
    read added to ``prompt_files``)."""
    from phasegate.phases.pagent import load_pipeline_file

    return load_pipeline_file(
        pipeline_file,
        workdir=workdir,
        files_root=files_root,
        file_format=file_format,
        prompt_files=prompt_files,
    )


def _home_of(pipeline_file: Path) -> Path:
    """The work directory a pagent file belongs to: the folder holding its ``.claude/``."""
    parent = pipeline_file.resolve().parent
    return parent.parent if parent.name == ".claude" else Path()


def _inputs(
    pipeline_file: Path,
    pipeline: Pipeline,
    workdir: Path,
    agent: AgentOptions,
    prompts_dir: Path | None,
) -> list[Path | None]:
    """The files a pipeline command reads: a log file must be none of them."""
    from phasegate.modes import STATE_DIR
    from phasegate.pipelines.state import BASELINE_FILE, STATE_FILE

    stage_prompts = [pipeline_file.parent / s.prompt_file for s in pipeline.stages if s.prompt_file]
    state = [workdir / STATE_DIR / STATE_FILE, workdir / STATE_DIR / BASELINE_FILE]
    return [
        pipeline_file,
        agent.script,
        agent.model_script,
        *stage_prompts,
        *prompt_files(prompts_dir),
        *state,
    ]


def _run_and_finish(
    pipeline_file: Path,
    workdir: Path,
    agent: AgentOptions,
    output: OutputOptions,
    *,
    isolation: Isolation | None,
    retries: int,
    prompts_dir: Path | None,
    files_root: Path | None,
    file_format: PipelineFormat,
    json_output: bool,
    restart: bool = False,
    resume: bool = False,
    max_parallel: int | None = None,
) -> None:
    """Load the pipeline, refuse a log over its inputs, run it (or resume it, in the isolation
    its state records: ``isolation`` None) and print the report."""
    from phasegate.pipelines.state import load_state

    read: list[Path] = []
    pipeline = _load(pipeline_file, workdir, files_root, file_format, read)
    if isolation is None:  # a bad state file fails here, before anything starts
        isolation = load_state(workdir.resolve()).isolation
    inputs = [*_inputs(pipeline_file, pipeline, workdir, agent, prompts_dir), *read]
    refuse_log_over_inputs(output.log_file, inputs)
    output = dataclasses.replace(output, record=recording_folder(output.record))
    report = _run(pipeline, workdir, agent, output, isolation, retries, prompts_dir,
                  restart=restart, resume=resume, max_parallel=max_parallel)  # fmt: skip
    print_recording(output.record)
    finish(report, json_output=json_output, human=format_pipeline)


def _run(
    pipeline: Pipeline,
    workdir: Path,
    agent: AgentOptions,
    output: OutputOptions,
    isolation: Isolation,
    retries: int,
    prompts_dir: Path | None,
    *,
    restart: bool = False,
    resume: bool = False,
    max_parallel: int | None = None,
) -> PipelineReport:
    """The run (or resumed run) the options describe, with its model server and log open while
    it runs."""
    from phasegate.running import RunOptions, run_definition

    with contextlib.ExitStack() as stack:
        options = RunOptions(
            isolation=isolation, timeout=agent.timeout, retries=retries, prompts_dir=prompts_dir,
            on_event=event_sink(stack, output), record=output.record,
            sandbox=agent.sandbox_mode, sandbox_default=sandbox_default(),
            max_parallel=max_parallel, grader=agent.grader,
        )  # fmt: skip
        built = build_agent(stack, agent, continue_script=isolation == "process")
        return asyncio.run(
            run_definition(pipeline, workdir, built, options, restart=restart, resume=resume)
        )
