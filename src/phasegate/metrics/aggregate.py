"""Streaming aggregation of run-event log lines into per-task, per-mode, per-phase metrics.

:class:`LogAggregator` takes lines one at a time and keeps only counters, sums and bounded
histograms, plus a small record per run still in progress; memory stays flat however long
the log is. Lines that are not JSON objects, or whose fields have the wrong types, are counted
in ``skipped`` and otherwise ignored. Events of unknown kinds are ignored: logs from newer
versions still read. Pipeline runs are not reported (yet): their own events are unknown kinds
here, and their ``tool.called`` lines, which carry ``stage`` instead of ``phase``, are passed
over, so a log mixing task and pipeline runs reports its task runs as if alone.

Time to phase completion is measured from the run's ``run.started`` to the phase's last
completion claim (``phase.marker``) before the gate first accepted it, or to that accepting
``phase.gate`` when there was no claim (the output phase).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic_core import from_json

from phasegate.metrics.stats import Outcomes, PhaseStats, RunStats

MAX_OPEN_RUNS = 10_000
"""Runs kept open at once waiting for their ``run.completed``; older ones are dropped."""

_Handler = Callable[[dict[str, Any]], None]
_SKIPPABLE = (
    b'{"event": "tool.called", ',
    b'{"event": "phase.started", ',
    b'{"event": "retry.scheduled", ',
)
# The event name's first letter picks how such a line must end to be skipped unparsed.
_SKIPPABLE_END = {
    ord("t"): (b', "ok": true}\n', b', "ok": true}'),
    ord("p"): (b"}\n", b"}"),
    ord("r"): (b"}\n", b"}"),
}


@dataclass(slots=True)
class _OpenRun:
    started: str
    claims: dict[int, str] = field(default_factory=dict)
    completed: dict[int, str] = field(default_factory=dict)


class LogAggregator:
    """Accumulates run events; read the totals with :func:`phasegate.metrics.summary.summarize`.

    ``since`` (an aware datetime) drops events older than it.
    """

    def __init__(self, *, since: datetime | None = None) -> None:
        self.since = since.isoformat(timespec="milliseconds") if since is not None else None
        self.lines = 0
        self.skipped = 0
        self.runs: dict[tuple[str, str], RunStats] = {}
        self.phases: dict[tuple[str, str, int], PhaseStats] = {}
        self.phase_names: dict[tuple[str, int], str] = {}
        self._open: dict[str, _OpenRun] = {}
        self._handlers: dict[str, _Handler] = {
            "run.started": self._run_started,
            "phase.marker": self._phase_marker,
            "phase.gate": self._phase_gate,
            "tool.called": self._tool_called,
            "phase.completed": self._phase_completed,
            "run.completed": self._run_completed,
        }

    def add_lines(self, lines: Iterable[str | bytes]) -> None:
        """Add every line of ``lines`` (blank lines are not counted).

        Lines that change no metric (a successful ``tool.called``, ``phase.started``,
        ``retry.scheduled``) are counted without being parsed when they have the exact shape
        ``EventLog`` writes (the event name first, ``ok`` last): they are most of a log. This
        loop is the hot path of ``phasegate report``.
        """
        handlers, since = self._handlers, self.since
        counted = skipped = 0
        for raw in lines:
            line = raw.encode() if isinstance(raw, str) else raw
            counted += 1
            if line.startswith(_SKIPPABLE) and line.endswith(_SKIPPABLE_END[line[11]]):
                continue
            try:
                event = from_json(line)
            except ValueError:
                if line.strip():
                    skipped += 1
                else:
                    counted -= 1
                continue
            if type(event) is not dict:
                skipped += 1
                continue
            name = event.get("event")
            handler = handlers.get(name) if isinstance(name, str) else None
            if handler is None:
                continue
            if since is not None and str(event.get("timestamp", "")) < since:
                continue
            try:
                handler(event)
            except (KeyError, TypeError, ValueError, AttributeError):
                skipped += 1
        self.lines += counted
        self.skipped += skipped

    def add_line(self, line: str | bytes) -> None:
        """Add one log line."""
        self.add_lines((line,))

    # -- handlers ---------------------------------------------------------------------------
    def _run_started(self, event: dict[str, Any]) -> None:
        if len(self._open) >= MAX_OPEN_RUNS:
            del self._open[next(iter(self._open))]
        self._open[str(event["run_id"])] = _OpenRun(started=_timestamp(event))

    def _phase_marker(self, event: dict[str, Any]) -> None:
        run = self._open.get(str(event["run_id"]))
        if run is not None:
            run.claims[int(event["phase"])] = _timestamp(event)

    def _phase_gate(self, event: dict[str, Any]) -> None:
        run = self._open.get(str(event["run_id"]))
        phase = int(event["phase"])
        if run is not None and event["accepted"] is True and phase not in run.completed:
            run.completed[phase] = run.claims.get(phase, _timestamp(event))

    def _tool_called(self, event: dict[str, Any]) -> None:
        if "stage" in event and "phase" not in event:
            return  # a pipeline run's call
        if event["ok"] is False:
            task, mode = str(event["task"]), str(event["mode"])
            self._phase(task, mode, int(event["phase"])).tool_errors += 1
            self._run(task, mode).tool_errors += 1

    def _phase_completed(self, event: dict[str, Any]) -> None:
        self._name(event)
        phase = int(event["phase"])
        stats = self._phase(str(event["task"]), str(event["mode"]), phase)
        accepted = event["status"] == "accepted"
        _count(stats, event, accepted)
        run = self._open.get(str(event["run_id"]))
        if accepted and run is not None and phase in run.completed:
            stats.to_completion_ms.add(_elapsed_ms(run.started, run.completed[phase]))

    def _run_completed(self, event: dict[str, Any]) -> None:
        stats = self._run(str(event["task"]), str(event["mode"]))
        verdict = event["verdict"]
        attempts = _count(stats, event, verdict == "accepted")
        stats.errors += verdict == "error"
        stats.mismatched += bool(event.get("findings"))
        stats.duration_ms.add(float(event.get("duration_ms") or 0))
        stats.attempts_histogram[attempts] = stats.attempts_histogram.get(attempts, 0) + 1
        self._open.pop(str(event["run_id"]), None)

    # -- helpers ----------------------------------------------------------------------------
    def _phase(self, task: str, mode: str, phase: int) -> PhaseStats:
        key = (task, mode, phase)
        stats = self.phases.get(key)
        if stats is None:
            stats = self.phases[key] = PhaseStats()
        return stats

    def _run(self, task: str, mode: str) -> RunStats:
        key = (task, mode)
        stats = self.runs.get(key)
        if stats is None:
            stats = self.runs[key] = RunStats()
        return stats

    def _name(self, event: dict[str, Any]) -> None:
        name = event.get("name")
        if isinstance(name, str):
            self.phase_names[(str(event["task"]), int(event["phase"]))] = name


def _count(stats: Outcomes, event: dict[str, Any], accepted: bool) -> int:
    """Count one finished phase or run (its ``*.completed`` event); its gate checks."""
    attempts = int(event.get("attempts") or 0)
    stats.runs += 1
    stats.accepted += accepted
    stats.first_attempt += accepted and attempts == 1
    stats.attempts += attempts
    stats.input_tokens += int(event.get("input_tokens") or 0)
    stats.output_tokens += int(event.get("output_tokens") or 0)
    stats.cost_usd += float(event.get("cost_usd") or 0.0)
    return attempts


def _timestamp(event: dict[str, Any]) -> str:
    value = event["timestamp"]
    if not isinstance(value, str):
        raise TypeError("timestamp must be a string")
    return value


def _elapsed_ms(start: str, end: str) -> float:
    delta = datetime.fromisoformat(end) - datetime.fromisoformat(start)
    return max(delta.total_seconds() * 1000, 0.0)
