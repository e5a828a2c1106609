"""How ``batch run`` shows progress on stderr: a live rich display on a terminal, else (or
with --quiet) one line per finished unit."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

from phasegate.metrics.formatting import duration
from phasegate.batches.progress import BatchCounts, BatchSink, BatchUpdate


@contextlib.contextmanager
def batch_display(*, quiet: bool, concurrency: int) -> Iterator[BatchSink]:
    """The sink for a batch run's updates, shown for the duration of the ``with``."""
    if quiet or not sys.stderr.isatty():
        yield _unit_line
        return
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[status]}"),
        console=Console(stderr=True),
        transient=False,
    )
    with progress:
        task = progress.add_task("units", total=None, status="")
        yield _LiveDisplay(progress, task, concurrency)


class _LiveDisplay:
    def __init__(self, progress: Progress, task: TaskID, concurrency: int) -> None:
        self.progress, self.task, self.concurrency = progress, task, concurrency

    def __call__(self, update: BatchUpdate) -> None:
        counts = update.counts
        self.progress.update(
            self.task,
            total=counts.to_run,
            completed=counts.done,
            status=status_text(counts, self.concurrency),
        )
        if update.kind == "stopping":
            self.progress.console.print(f"phasegate: stopping: {_reason(update)}")


def status_text(counts: BatchCounts, concurrency: int) -> str:
    """accepted/rejected/error counts, cost so far and the time left."""
    eta = counts.eta_seconds(concurrency)
    left = f" · ETA {duration(eta * 1000)}" if eta is not None else ""
    return (
        f"{counts.accepted} accepted · {counts.rejected} rejected · {counts.errors} error · "
        f"{counts.running} running · ${counts.cost_usd:.4f}{left}"
    )


def _unit_line(update: BatchUpdate) -> None:
    counts = update.counts
    if update.kind == "planned":
        typer.echo(
            f"phasegate: {counts.to_run} unit(s) to run, {counts.skipped} finished before",
            err=True,
        )
    elif update.kind == "finished" and update.outcome is not None:
        outcome = update.outcome
        cost = f", ${outcome.cost_usd:.4f}" if outcome.cost_usd is not None else ""
        typer.echo(
            f"phasegate: [{counts.done}/{counts.to_run}] {outcome.unit.id}: {outcome.verdict} "
            f"in {duration(outcome.duration_ms)}{cost}",
            err=True,
        )
    elif update.kind == "stopping":
        typer.echo(f"phasegate: stopping: {_reason(update)}", err=True)


def _reason(update: BatchUpdate) -> str:
    if update.reason == "stopped":
        return "no new units start; running ones finish or are cancelled after the grace period"
    if update.reason == "max_cost":
        return "the cost cap is reached; no new units start"
    return f"{update.reason}; no new units start"
