"""``phasegate batch run``: every unit of a batch file, resumable, sharded, bounded."""

from __future__ import annotations

import asyncio
import json
import re
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from phasegate._cli.options import CliPath
from phasegate._cli.output import print_result
from phasegate.errors import UsageError

if TYPE_CHECKING:
    from phasegate.batches.executor import Executor
    from phasegate.batches.loading import Batch
    from phasegate.batches.runner import BatchRunner, BatchSummary

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
    from phasegate._cli.batch_progress import batch_display
    from phasegate.batches.agents import ClaudeAgents
    from phasegate.batches.loading import load_batch
    from phasegate.batches.runner import BatchRunner

    for flag, value in (("--address", address), ("--cpus-per-unit", cpus_per_unit)):
        if value is not None and executor != "ray":
            raise UsageError(f"{flag} is for the Ray executor: add --executor ray")
    which = parse_shard(shard) if shard is not None else None
    batch = load_batch(batch_file, model_script=model_script.resolve() if model_script else None)
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
            "cost_usd": round(counts.cost_usd, 6),
            "model_requests": summary.model_requests,
            "stopped": summary.stopped,
        }
        print_result(json.dumps(fields, indent=2))
    else:
        print_result(
            f"{summary.out}: {counts.total} unit(s); ran {len(summary.ran)} "
            f"({counts.accepted} accepted, {counts.rejected} rejected, {counts.errors} error), "
            f"skipped {len(summary.skipped)} finished before, "
            f"{len(summary.unfinished)} unfinished; cost ${counts.cost_usd:.4f}"
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
