"""``phasegate batch run | report``: many units, resumable and sharded, and their merged report."""

from __future__ import annotations

import typer

from phasegate._cli.batch_report import batch_report
from phasegate._cli.batch_run import batch_run

app = typer.Typer(
    help="Run a batch of tasks and pipelines in several modes and repeats, and report on it.",
    no_args_is_help=True,
)
app.command("run")(batch_run)
app.command("report")(batch_report)
