"""Command-line option types shared by ``phasegate run`` and ``phasegate pipeline``."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer


class AgentOption(StrEnum):
    """Values of ``--agent``."""

    claude = "claude"
    scripted = "scripted"


PromptsDir = Annotated[
    Path | None,
    typer.Option(
        "--prompts-dir",
        envvar="PHASEGATE_PROMPTS_DIR",
        help="Directory whose template files replace the bundled prompt templates.",
    ),
]
Workdir = Annotated[Path, typer.Option("--workdir", "-w", help="Directory the agent works in.")]
Script = Annotated[
    Path | None, typer.Option("--script", help="Script of model replies, for --agent scripted.")
]
Model = Annotated[str | None, typer.Option(help="Claude model name (claude agent).")]
CliPath = Annotated[
    Path | None, typer.Option(help="Claude Code CLI to run instead of the bundled one.")
]
Retries = Annotated[
    int, typer.Option(min=0, help="Session restarts after a transient failure (API, crash).")
]
JsonOutput = Annotated[bool, typer.Option("--json", help="Print the report as JSON.")]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines on stderr.")]
LogFile = Annotated[
    Path | None,
    typer.Option(help="Append every event to this file, one JSON line each (docs/events.md)."),
]
