"""``phasegate plan``: what a task can infer from the work directory, and what to ask."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from phasegate._cli.json_arguments import json_argument
from phasegate._cli.options import FilesRoot

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
) -> None:
    """Print the plan as one JSON object: inferred values, questions, progress (never writes).

    Runs no agent and changes nothing on disk; the same call prints the same bytes.
    """
    from phasegate.planning.reference import plan_task

    definition = load_definition(task_file, files_root)
    made = plan_task(
        definition,
        workdir,
        context=json_argument(context, "--context"),
        responses=json_argument(responses, "--responses", lists=True),
        questions_per_turn=questions_per_turn,
    )
    typer.echo(made.to_json(), nl=False)


def load_definition(path: Path, files_root: Path | None) -> Task | Pipeline:
    """The task or pipeline in ``path``: a file with ``stages`` is a pipeline."""
    from phasegate._files import read_mapping
    from phasegate.errors import TaskFileError
    from phasegate.phases.loading import load_task
    from phasegate.phases.pipeline import load_pipeline

    data = read_mapping(path, TaskFileError)
    if "stages" in data and "phases" not in data:
        return load_pipeline(path, files_root=files_root)
    return load_task(path, files_root=files_root)
