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
