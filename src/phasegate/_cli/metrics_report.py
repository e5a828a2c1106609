"""``phasegate report``: metrics per task, mode and phase from run event logs."""

from __future__ import annotations

import re
import sys
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Annotated

import typer

from phasegate._cli.output import cannot_write, print_result
from phasegate._cli.wiring import same_file
from phasegate.errors import UsageError
from phasegate.metrics.periods import Over
from phasegate.metrics.render import ReportFormat
from phasegate.modes import GroupBy


def report_command(
    logs: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="LOG...", help="Event logs (plain or gzip); '-' or none reads stdin."
        ),
    ] = None,
    output_format: Annotated[
        ReportFormat, typer.Option("--format", "-f", help="How to write the report.")
    ] = "table",
    by: Annotated[
        GroupBy, typer.Option(help="Group by task, mode, or phase (task and mode).")
    ] = "phase",
    since: Annotated[
        str | None,
        typer.Option(
            help="Only events since: a time (2026-11-01, 2026-11-01T12:00Z) or an "
            "age (45m, 24h, 7d)."
        ),
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")
    ] = None,
    over: Annotated[
        Over | None,
        typer.Option(help="Also a trend: the same figures per day or per week (Monday)."),
    ] = None,
    tz: Annotated[
        str,
        typer.Option(help="The time zone of --over's periods (an IANA name: Europe/Paris)."),
    ] = "UTC",
) -> None:
    """Metrics per task, mode and phase from run event logs (phasegate run --log-file)."""
    if output is not None:
        _refuse_to_overwrite_a_log(output, logs or [])
    color = output is None and sys.stdout.isatty()
    start = parse_since(since) if since else None
    zone = parse_zone(tz)
    base = output.parent if output is not None else None
    trend = (over, tz, zone) if over is not None else None
    text = render_logs(
        logs or [], output_format, by=by, since=start, color=color, base=base, trend=trend
    )
    write_report(text, output)


def write_report(text: str, output: Path | None) -> None:
    """A rendered report to ``output``, or to stdout without one."""
    if output is None:
        print_result(text, nl=False)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise cannot_write(exc, f"cannot write report to {output}") from None
    typer.echo(f"phasegate: wrote {output}", err=True)


def render_logs(
    logs: list[str],
    output_format: ReportFormat,
    *,
    by: GroupBy = "phase",
    since: datetime | None = None,
    color: bool = False,
    quiet: bool = False,
    base: Path | None = None,
    trend: tuple[Over, str, tzinfo] | None = None,
) -> str:
    """The metrics of ``logs`` in ``output_format``; what was skipped is said on stderr
    unless ``quiet``. Recorded runs link to their pages relative to ``base`` (the report's
    folder). ``trend`` (periods, the zone's name, the zone) adds the figures per period."""
    from phasegate.metrics.aggregate import LogAggregator
    from phasegate.metrics.formatting import quantity
    from phasegate.metrics.periods import PeriodAggregator, summarize_periods
    from phasegate.metrics.reading import MAX_LINE_BYTES, LogReader
    from phasegate.metrics.render import render_summary
    from phasegate.metrics.summary import summarize

    reader = LogReader(logs)
    aggregator = (
        LogAggregator(since=since)
        if trend is None
        else PeriodAggregator(trend[0], trend[2], since=since)
    )
    aggregator.add_lines(reader.lines())
    if isinstance(aggregator, PeriodAggregator):
        aggregator.collect()
    for warning in [] if quiet else reader.warnings:
        typer.echo(f"phasegate: warning: {warning}", err=True)
    if aggregator.skipped and not quiet:
        what = quantity(aggregator.skipped, "corrupt or truncated line")
        cap = f"{MAX_LINE_BYTES // (1 << 20)} MiB"
        longer = f" ({reader.long_lines} longer than {cap})" if reader.long_lines else ""
        typer.echo(f"phasegate: skipped {what}{longer}", err=True)
    summary = summarize(aggregator, by, warnings=reader.warnings)
    if isinstance(aggregator, PeriodAggregator) and trend is not None:
        summary = summarize_periods(aggregator, summary, by, trend[1])
    return render_summary(summary, output_format, color=color, base=base)


def _refuse_to_overwrite_a_log(output: Path, logs: list[str]) -> None:
    """--output must not be one of the logs read (the same path, or the same file through a
    symlink or a hard link): writing the report would destroy the log."""
    for log in logs:
        if log == "-" or not same_file(output, Path(log)):
            continue
        raise UsageError(
            f"--output {output} is the log {log}: writing the report there would replace the "
            "log; choose another file"
        )


def parse_since(text: str) -> datetime:
    """``--since``: an ISO 8601 time (UTC when no zone is given) or an age like 45m/24h/7d."""
    age = re.fullmatch(r"\s*(\d+)\s*([smhdw])\s*", text)
    if age:
        seconds = (
            int(age.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}[age.group(2)]
        )
        return datetime.now(UTC) - timedelta(seconds=seconds)
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"--since {text!r} is neither a time (2026-11-01T12:00Z) nor an age (24h, 7d)"
        ) from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def parse_zone(name: str) -> tzinfo:
    """``--tz``: an IANA time zone (``UTC``, ``Europe/Paris``)."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise UsageError(
            f"--tz {name!r} is no time zone this system knows: give an IANA name such as UTC, "
            "Europe/Paris or America/New_York"
        ) from None
