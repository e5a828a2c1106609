"""``phasegate report``: metrics per task, mode and phase from run event logs."""

from __future__ import annotations

import errno
import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, TextIO, cast, get_args

import typer

from phasegate._cli.output import cannot_write, print_result
from phasegate._cli.wiring import same_file
from phasegate.errors import UsageError
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
) -> None:
    """Metrics per task, mode and phase from run event logs (phasegate run --log-file)."""
    if output is not None:
        _refuse_to_overwrite_a_log(output, logs or [])
    color = output is None and sys.stdout.isatty()
    start = parse_since(since) if since else None
    write_report(render_logs(logs or [], output_format, by=by, since=start, color=color), output)


_VALUES = {"--format": "-f", "--by": "--by", "--since": "--since", "--output": "-o"}
"""report_command's options, each with its other spelling (itself when it has none)."""
_CHOICES: dict[str, tuple[str, ...]] = {
    "--format": get_args(ReportFormat),
    "--by": get_args(GroupBy),
}


def report_at_once(args: list[str]) -> int | None:
    """Run ``phasegate report`` with ``args`` (what follows ``report``) without typer, when
    they are of the plain form ``[LOG | --format F | -f F | --by B | --since S | --output O |
    -o O]...`` with each option once, F and B among their choices, and no value starting with
    ``-`` (a lone ``-`` is a log: stdin); otherwise None, and typer parses them (help, errors,
    ``--opt=value``). Its exit code, as typer's would be.

    Typer builds a pydantic adapter for every parameter: about 0.15 s of a report's start-up,
    which the large-log bench counts against a 2 s parse.
    """
    logs: list[str] = []
    values: dict[str, str] = {}
    spelled = {short: long for long, short in _VALUES.items()} | {long: long for long in _VALUES}
    tokens = iter(args)
    for token in tokens:
        if token == "-" or not token.startswith("-"):
            logs.append(token)
            continue
        option = spelled.get(token)
        value = next(tokens, None)
        if option is None or option in values or value is None or value[:1] in ("-", ""):
            return None
        if value not in _CHOICES.get(option, (value,)):
            return None
        values[option] = value
    output = values.get("--output")
    # What typer's main does around a command (typer.core._main), for the same ending.
    try:
        report_command(
            logs or None,
            cast(ReportFormat, values.get("--format", "table")),
            cast(GroupBy, values.get("--by", "phase")),
            values.get("--since"),
            Path(output) if output is not None else None,
        )
    except EOFError as exc:
        typer.echo(err=True)
        raise typer.Abort() from exc
    except KeyboardInterrupt:
        return 130
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        from typer._click.utils import PacifyFlushWrapper

        sys.stdout = cast(TextIO, PacifyFlushWrapper(sys.stdout))
        sys.stderr = cast(TextIO, PacifyFlushWrapper(sys.stderr))
        sys.exit(1)
    return 0


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
) -> str:
    """The metrics of ``logs`` in ``output_format``; what was skipped is said on stderr
    unless ``quiet``."""
    from phasegate.metrics.aggregate import LogAggregator
    from phasegate.metrics.formatting import quantity
    from phasegate.metrics.reading import MAX_LINE_BYTES, LogReader
    from phasegate.metrics.render import render_summary
    from phasegate.metrics.summary import summarize

    reader = LogReader(logs)
    aggregator = LogAggregator(since=since)
    aggregator.add_lines(reader.lines())
    for warning in [] if quiet else reader.warnings:
        typer.echo(f"phasegate: warning: {warning}", err=True)
    if aggregator.skipped and not quiet:
        what = quantity(aggregator.skipped, "corrupt or truncated line")
        cap = f"{MAX_LINE_BYTES // (1 << 20)} MiB"
        longer = f" ({reader.long_lines} longer than {cap})" if reader.long_lines else ""
        typer.echo(f"phasegate: skipped {what}{longer}", err=True)
    return render_summary(summarize(aggregator, by, warnings=reader.warnings), output_format,
                          color=color)  # fmt: skip


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
