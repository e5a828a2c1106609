"""Run events as structured log lines, through structlog.

:class:`EventLog` is an event sink (``Runner(on_event=EventLog(...))``): each
:class:`~phasegate.telemetry.events.RunEvent` becomes one line, JSON by default (the shape
``docs/events.md`` documents and dashboards read) or a human-readable console line.

A log file is opened for appending and every line goes out in a single ``write`` on an
``O_APPEND`` descriptor, so several runs (even several processes) can share one file without
interleaving their lines. Secrets never reach a line: every event passes through
:func:`phasegate._secrets.redact` (fields named like keys or tokens, headers, bearer tokens,
``sk-...`` keys, credentials inside URLs, the values of the process's own secret environment
variables) before any processor or logger sees it.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from phasegate._secrets import environment_secrets, redact
from phasegate.errors import RunError, UsageError
from phasegate.modes import LogFormat
from phasegate.telemetry.events import RunEvent

if TYPE_CHECKING:
    from structlog.typing import Processor


class EventLog:
    """Writes run events as log lines.

    ``file``: append to this path (created if missing); otherwise ``stream`` (default
    stderr). ``log_format``: ``json`` (one object a line) or ``console``. ``processors`` run
    after redaction and before rendering. ``logger``: a structlog logger of your own (given
    alone); events are then handed to its ``info`` (redacted first) and your configuration
    renders and writes them. ``secrets``: more text to hide, besides the values of the
    process's secret environment variables. ``fields``: more fields for every line, after the
    event's own (the plugin's ``via``).

    JSON lines with no processors and no logger of your own are rendered without structlog,
    which is then not imported (it costs a hook process about 0.1 s); the lines are the same.
    """

    def __init__(
        self,
        *,
        file: str | Path | None = None,
        stream: TextIO | None = None,
        log_format: LogFormat = "json",
        processors: Sequence[Processor] = (),
        logger: Any = None,
        secrets: Sequence[str] = (),
        fields: Mapping[str, Any] | None = None,
    ) -> None:
        if log_format not in ("json", "console"):
            raise UsageError(f"unknown log format {log_format!r}; choose json or console")
        if logger is not None and (file is not None or stream is not None or processors):
            raise UsageError(
                "EventLog: your own logger renders and writes the events itself; pass it "
                "without file, stream or processors (configure those in structlog instead)"
            )
        self.output_files: tuple[Path, ...] = (
            (Path(os.path.abspath(file)),) if file is not None else ()
        )
        """The log file, made absolute (none when writing to a stream): a runner does not
        count it as the agent's work when it lies in the work directory."""
        self._writer = _AppendWriter(Path(file)) if file is not None else _StreamWriter(stream)
        self._secrets = sorted(
            {*environment_secrets(os.environ), *(s for s in secrets if s)}, key=len, reverse=True
        )
        self._fields = dict(fields or {})
        if logger is None and not processors and log_format == "json":
            self._logger: Any = None  # plain JSON lines: rendered here, as JSONRenderer would
            return
        import structlog

        renderer: Processor = (
            structlog.processors.JSONRenderer(serializer=_dumps)
            if log_format == "json"
            else structlog.dev.ConsoleRenderer(colors=False, sort_keys=False)
        )
        self._logger = logger or structlog.wrap_logger(
            self._writer,
            processors=[*processors, renderer],
            wrapper_class=structlog.BoundLogger,
            cache_logger_on_first_use=False,
        )

    def __call__(self, event: RunEvent) -> None:
        """Log one event."""
        line = redact({**event.as_dict(), **self._fields}, self._secrets)
        if self._logger is None:
            self._writer.msg(_dumps(line))
            return
        name = line.pop("event")
        self._logger.info(name, **line)

    def close(self) -> None:
        """Close the log file (a stream is left open)."""
        self._writer.close()

    def __enter__(self) -> EventLog:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _dumps(value: Any, **_: Any) -> str:
    ordered = {"event": value.pop("event"), **value} if "event" in value else value
    return json.dumps(ordered, ensure_ascii=False, default=str)


class _AppendWriter:
    """structlog's output: whole lines appended to a file with one write each."""

    def __init__(self, path: Path) -> None:
        self._path = path
        try:
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            raise UsageError(
                f"cannot open log file {path}: {exc.strerror or exc}; make its folder "
                "writable, or log to another file"
            ) from None

    def msg(self, message: str) -> None:
        data = (message + "\n").encode("utf-8")
        try:
            while data:
                written = os.write(self._fd, data)
                data = data[written:]
        except OSError as exc:
            # A full disk or a quota mid-run: the run cannot be evidenced as asked, so it
            # ends as a failure of its infrastructure, naming the file, not with a trace.
            raise RunError(
                f"cannot write to log file {self._path}: {exc.strerror or exc}; free space "
                "on its disk, or log to another file"
            ) from None

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    info = msg


class _StreamWriter:
    def __init__(self, stream: TextIO | None) -> None:
        self._stream = stream

    def msg(self, message: str) -> None:
        stream = self._stream or sys.stderr
        stream.write(message + "\n")
        stream.flush()

    def close(self) -> None:
        pass

    info = msg
