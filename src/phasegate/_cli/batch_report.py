"""``phasegate batch report``: the merged report of one or more batch output directories."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from phasegate._cli.report import write_report
from phasegate._cli.wiring import same_file
from phasegate.errors import UsageError
from phasegate.metrics.render import ReportFormat


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
    write_report(render_batches(directories, output_format, color=color), output)


def render_batches(
    directories: list[Path], output_format: ReportFormat, *, color: bool = False
) -> str:
    """The merged report of ``directories`` in ``output_format``; every warning (a file that
    could not be read, a duplicate unit) is said on stderr and kept in the report."""
    from phasegate.metrics.aggregate import LogAggregator
    from phasegate.metrics.formatting import quantity
    from phasegate.metrics.render import render_summary
    from phasegate.metrics.summary import summarize
    from phasegate.batches.collect import collect_batches

    collected = collect_batches(directories)
    aggregator = LogAggregator()
    collected.aggregate(aggregator)
    for warning in collected.warnings:
        typer.echo(f"phasegate: warning: {warning}", err=True)
    if aggregator.skipped:
        what = quantity(aggregator.skipped, "corrupt or truncated line")
        typer.echo(f"phasegate: skipped {what} of the units' event logs", err=True)
    summary = summarize(aggregator, "phase", warnings=collected.warnings)
    summary["batch"] = collected.section()
    return render_summary(summary, output_format, color=color)


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
