"""``phasegate batch run | report``: many units, resumable and sharded, and their merged report.

``batch run`` runs every unit of a batch file, resumable, sharded and bounded, and shows its
progress on stderr: a live rich display on a terminal, else (or with ``--quiet``) one line
per finished unit. ``batch report`` merges the report of one or more batch output
directories. The batch machinery itself is :mod:`phasegate.batches`; this is its command
line, one module because the two commands share their options and their words.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

from phasegate._cli.metrics_report import write_report
from phasegate._cli.options import CliPath, MaxParallel, SandboxSwitch, sandbox_mode
from phasegate._cli.output import print_result
from phasegate._cli.wiring import same_file
from phasegate.errors import UsageError
from phasegate.metrics.formatting import duration, usd
from phasegate.metrics.render import ReportFormat

if TYPE_CHECKING:
    # Types only: the progress module imports the batch machinery (units, agents, the task
    # models), which `phasegate batch --help` has no use for.
    from phasegate.batches.executor import Executor
    from phasegate.batches.loading import Batch
    from phasegate.batches.progress import BatchCounts, BatchSink, BatchUpdate
    from phasegate.batches.runner import BatchRunner, BatchSummary


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
        f"{counts.running} running · {usd(counts.known_cost_usd)}{left}"
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


def batch_report(
    directories: Annotated[
        list[Path],
        typer.Argument(
            metavar="DIR...",
            help="Batch output directories (batch run --out), e.g. the shards of a CI matrix.",
        ),
    ],
    output_format: Annotated[
        ReportFormat, typer.Option("--format", "-f", help="How to write the report.")
    ] = "table",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")
    ] = None,
) -> None:
    """One report over the results of batch output directories: pass rates per task and mode
    with their uncertainty, the gate's gain over the other modes, cost per accepted run, the
    per-phase metrics, and what is missing. Exit 0 when written (an empty shard is a report
    too), 2 when a directory is not a batch output directory."""
    if output is not None:
        _refuse_to_overwrite_results(output, directories)
    color = output is None and sys.stdout.isatty()
    base = output.parent if output is not None else None
    write_report(render_batches(directories, output_format, color=color, base=base), output)


def render_batches(
    directories: list[Path],
    output_format: ReportFormat,
    *,
    color: bool = False,
    base: Path | None = None,
) -> str:
    """The merged report of ``directories`` in ``output_format``; every warning (a file that
    could not be read, a duplicate unit) is said on stderr and kept in the report. A unit
    that recorded its run links to its page (written when missing), relative to ``base``."""
    from phasegate.batches.collect import collect_batches
    from phasegate.metrics.aggregate import LogAggregator
    from phasegate.metrics.formatting import quantity
    from phasegate.metrics.render import render_summary
    from phasegate.metrics.summary import summarize

    collected = collect_batches(directories)
    aggregator = LogAggregator()
    collected.aggregate(aggregator)
    recordings = collected.recordings()
    for warning in collected.warnings:
        typer.echo(f"phasegate: warning: {warning}", err=True)
    if aggregator.skipped:
        what = quantity(aggregator.skipped, "corrupt or truncated line")
        typer.echo(f"phasegate: skipped {what} of the units' event logs", err=True)
    summary = summarize(aggregator, "phase", warnings=collected.warnings)
    summary["batch"] = collected.section()
    if recordings:
        summary["recordings"], summary["recordings_unlisted"] = recordings, 0
    return render_summary(summary, output_format, color=color, base=base)


def _refuse_to_overwrite_results(output: Path, directories: list[Path]) -> None:
    """--output may not be a file the report reads: a manifest, or anything under units/."""
    target = output.resolve()
    for directory in directories:
        units = (directory / "units").resolve()
        if same_file(output, directory / "batch.json") or target.is_relative_to(units):
            raise UsageError(
                f"--output {output} is part of the results in {directory}: writing the report "
                "there would change them; choose another file"
            )


ExecutorName = Literal["local", "ray"]
"""Values of ``--executor``."""
EXIT_INTERRUPTED = 130
"""The exit code of a batch stopped by Ctrl-C or SIGTERM."""


def batch_run(
    batch_file: Annotated[Path, typer.Argument(metavar="BATCH", help="Batch file (YAML or JSON).")],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Directory of the results (made if missing).")
    ],
    concurrency: Annotated[
        int | None, typer.Option(min=1, help="Units in flight (default: one per CPU).")
    ] = None,
    shard: Annotated[
        str | None, typer.Option(help="Run only shard I of N (I/N, from 1/N to N/N).")
    ] = None,
    executor: Annotated[
        ExecutorName, typer.Option(help="Where units run: on this machine, or on a Ray cluster.")
    ] = "local",
    address: Annotated[
        str | None, typer.Option(help="Ray cluster to connect to (default: start a local one).")
    ] = None,
    cpus_per_unit: Annotated[
        float | None, typer.Option(min=0.01, help="CPUs a unit takes on the Ray cluster (1).")
    ] = None,
    retry: Annotated[
        Literal["failed"] | None,
        typer.Option(help="'failed': run again units that ended rejected or in error."),
    ] = None,
    max_cost: Annotated[
        float | None, typer.Option(min=0, help="Start no unit once this run has cost this USD.")
    ] = None,
    grace: Annotated[
        float, typer.Option(min=0, help="Seconds running units get to finish after Ctrl-C.")
    ] = 30.0,
    model_script: Annotated[
        Path | None,
        typer.Option(
            help="Offline: units whose item names no model_script replay this one against "
            "phasegate's scripted model server (no key, no network)."
        ),
    ] = None,
    cli_path: CliPath = None,
    sandbox: SandboxSwitch = None,
    max_parallel: MaxParallel = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the summary as JSON on stdout.")
    ] = False,
    quiet: Annotated[
        bool,
        typer.Option("--quiet", "-q", help="A line per finished unit instead of the live display."),
    ] = False,
) -> None:
    """Run every unit (item x mode x repeat) of a batch file into --out.

    Units finished before are skipped; each result is written whole to OUT/units/ID/.
    Ctrl-C: no new unit starts, and running ones get --grace seconds to finish.
    Then: phasegate batch report OUT.
    """
    from phasegate._cli.batch import batch_display
    from phasegate._process.starting import require_process_groups
    from phasegate.batches.agents import ClaudeAgents
    from phasegate.batches.loading import load_batch
    from phasegate.batches.runner import BatchRunner

    if executor == "local":
        require_process_groups("phasegate batch run (the local executor)")
    for flag, value in (("--address", address), ("--cpus-per-unit", cpus_per_unit)):
        if value is not None and executor != "ray":
            raise UsageError(f"{flag} is for the Ray executor: add --executor ray")
    which = parse_shard(shard) if shard is not None else None
    batch = load_batch(
        batch_file,
        model_script=model_script.resolve() if model_script else None,
        sandbox=sandbox_mode(sandbox),
        max_parallel=max_parallel,
    )
    engine = _executor(executor, address, cpus_per_unit or 1.0)
    try:
        runner = BatchRunner(
            engine,
            agents=ClaudeAgents(cli_path=str(cli_path) if cli_path else None),
            concurrency=concurrency,
            max_cost=max_cost,
            retry_failed=retry == "failed",
            grace=grace,
        )
        with batch_display(quiet=quiet, concurrency=runner.concurrency) as display:
            runner.on_update = display
            summary = asyncio.run(_run(runner, batch, out, which))
    finally:
        engine.close()
    _finish(summary, json_output=json_output)


async def _run(
    runner: BatchRunner, batch: Batch, out: Path, shard: tuple[int, int] | None
) -> BatchSummary:
    loop = asyncio.get_running_loop()
    for number in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(number, runner.stop)
    try:
        return await runner.run(batch, out, shard=shard)
    finally:
        for number in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(number)


def parse_shard(text: str) -> tuple[int, int]:
    """``--shard I/N`` as (I, N), 1 <= I <= N."""
    # At most 9 digits each: a count past that is no shard, and int() of thousands of digits
    # raises (Python's conversion limit) instead of being refused.
    match = re.fullmatch(r"\s*(\d{1,9})\s*/\s*(\d{1,9})\s*", text)
    if match is None or not 1 <= int(match.group(1)) <= int(match.group(2)):
        raise UsageError(
            f"--shard {text[:40]!r}{'...' if len(text) > 40 else ''} is not I/N with "
            "1 <= I <= N < 10**9 (e.g. 2/4: the second of four)"
        )
    return int(match.group(1)), int(match.group(2))


def _executor(name: ExecutorName, address: str | None, cpus_per_unit: float) -> Executor:
    if name == "ray":
        from phasegate.batches.ray_executor import RayExecutor

        return RayExecutor(address, cpus_per_unit=cpus_per_unit)
    from phasegate.batches.local import LocalExecutor

    return LocalExecutor()


def _rounded(cost: float | None) -> float | None:
    return None if cost is None else round(cost, 6)


def _finish(summary: BatchSummary, *, json_output: bool) -> None:
    counts = summary.counts
    if json_output:
        fields = {
            "out": str(summary.out),
            "shard": summary.shard,
            "units": counts.total,
            "ran": list(summary.ran),
            "skipped": list(summary.skipped),
            "accepted": counts.accepted,
            "rejected": counts.rejected,
            "errors": counts.errors,
            "unfinished": list(summary.unfinished),
            "cost_usd": _rounded(counts.known_cost_usd),
            "model_requests": summary.model_requests,
            "stopped": summary.stopped,
        }
        print_result(json.dumps(fields, indent=2))
    else:
        print_result(
            f"{summary.out}: {counts.total} unit(s); ran {len(summary.ran)} "
            f"({counts.accepted} accepted, {counts.rejected} rejected, {counts.errors} error), "
            f"skipped {len(summary.skipped)} finished before, "
            f"{len(summary.unfinished)} unfinished; cost {usd(counts.known_cost_usd)}"
        )
        typer.echo(f"the merged report: phasegate batch report {summary.out}", err=True)
    if summary.complete:
        return
    if summary.stopped == "stopped":
        typer.echo("phasegate: interrupted; run the same command again to go on", err=True)
        raise typer.Exit(EXIT_INTERRUPTED)
    why = "the cost cap was reached" if summary.stopped == "max_cost" else summary.stopped
    typer.echo(f"phasegate: stopped early: {why}; run again to go on", err=True)
    raise typer.Exit(3)


app = typer.Typer(
    help="Run a batch of tasks and pipelines in several modes and repeats, and report on it.",
    no_args_is_help=True,
)
app.command("run")(batch_run)
app.command("report")(batch_report)
