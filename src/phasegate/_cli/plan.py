"""``phasegate plan``: what a task can infer from the work directory, and what to ask."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from phasegate._cli.json_arguments import json_argument
from phasegate._cli.options import (
    AgentOptions,
    CliPath,
    FilesRoot,
    Model,
    ModelScript,
    OutputOptions,
    Quiet,
    Script,
)
from phasegate._cli.output import print_result
from phasegate._cli.wiring import build_agent, event_sink
from phasegate.modes import DEFAULT_MAX_ATTEMPTS

if TYPE_CHECKING:
    from phasegate.phases.model import Task
    from phasegate.phases.pipeline import Pipeline

DefinitionFile = Annotated[
    Path, typer.Argument(metavar="TASK", help="Task or pipeline file (YAML or JSON).")
]


def plan(
    task_file: DefinitionFile,
    workdir: Annotated[
        Path, typer.Option("--workdir", "-w", help="The project the task will run in.")
    ] = Path(),
    context: Annotated[
        str | None, typer.Option(help="A JSON object the context rules read, or @FILE.")
    ] = None,
    responses: Annotated[
        str | None,
        typer.Option(
            help="Answers so far, or @FILE: {id: value}, AskUserQuestion's "
            '{"answers": {question: label}}, or a list of such objects, one per turn.'
        ),
    ] = None,
    questions_per_turn: Annotated[
        int, typer.Option(min=1, max=2, help="Questions one turn asks (1 or 2).")
    ] = 1,
    files_root: FilesRoot = None,
    agent: Annotated[
        Literal["reference", "claude", "scripted"],
        typer.Option(
            "--agent",
            help="reference: the rules alone, no model. claude: Claude Code also reads the "
            "project in a read-only clarify phase, checked by the same rules.",
        ),
    ] = "reference",
    script: Script = None,
    model_script: ModelScript = None,
    model: Model = None,
    timeout: Annotated[
        float, typer.Option(min=1, help="Seconds the clarify phase may take.")
    ] = 600.0,
    cli_path: CliPath = None,
    max_attempts: Annotated[
        int, typer.Option(min=1, help="Gate checks of the clarify phase.")
    ] = DEFAULT_MAX_ATTEMPTS,
    quiet: Quiet = False,
) -> None:
    """Print the plan as one JSON object: inferred values, questions, progress (never writes).

    The reference planner runs no agent; the same call prints the same bytes. With --agent
    claude a read-only clarify phase runs first; a change on disk rejects it (exit 1).
    """
    from phasegate.planning.reference import plan_task

    definition = load_definition(task_file, files_root)
    context_data = json_argument(context, "--context")
    answers = json_argument(responses, "--responses", lists=True)
    if agent == "reference":
        made = plan_task(definition, workdir, context=context_data, responses=answers,
                         questions_per_turn=questions_per_turn)  # fmt: skip
        print_result(made.to_json(), nl=False)
        return
    from phasegate.planning.agent_planner import plan_with_agent

    with contextlib.ExitStack() as stack:
        chosen = AgentOptions("scripted" if agent == "scripted" else "claude", script=script,
                              model_script=model_script, model=model, timeout=timeout,
                              cli_path=cli_path)  # fmt: skip
        planned = asyncio.run(
            plan_with_agent(
                definition, workdir, build_agent(stack, chosen), context=context_data,
                responses=answers, questions_per_turn=questions_per_turn,
                max_attempts=max_attempts, timeout=timeout,
                on_event=event_sink(stack, OutputOptions(quiet=quiet)),
            )
        )  # fmt: skip
    if planned.plan is None:
        report = planned.report
        why = report.error or "; ".join(issue.message for issue in report.issues)
        typer.echo(f"phasegate: the clarify phase was not accepted ({report.verdict}): {why}",
                   err=True)  # fmt: skip
        raise typer.Exit(report.exit_code)
    print_result(planned.plan.to_json(), nl=False)


def load_definition(path: Path, files_root: Path | None) -> Task | Pipeline:
    """The task or pipeline in ``path`` (read once): a file with ``stages`` is a pipeline."""
    from phasegate._files import read_mapping
    from phasegate.errors import TaskFileError
    from phasegate.phases.loading import task_from_file_data
    from phasegate.phases.pipeline import pipeline_from_file_data

    data = read_mapping(path, TaskFileError)
    if "stages" in data and "phases" not in data:
        return pipeline_from_file_data(path, data, files_root)
    return task_from_file_data(path, data, files_root)
