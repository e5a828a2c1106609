"""OpenTelemetry export of runs (optional: ``pip install 'phasegate[otel]'``).

:class:`OtelSink` is an event sink: a run becomes an ``invoke_agent`` span, each phase a
child span (placed by its start and duration), and tool calls, gate checks and retries
become span events. Metrics follow the GenAI semantic conventions where they apply
(``gen_ai.client.token.usage``, ``gen_ai.client.operation.duration``) and phasegate's own
names elsewhere (``phasegate.phase.completions``, ``phasegate.phase.attempts``,
``phasegate.tool.errors``, ``phasegate.runs``, ``phasegate.run.cost``).

The providers are the process's global ones unless given: configure the OpenTelemetry SDK
and exporters as for any instrumented library. Nothing here is imported unless asked for, so
phasegate without the extra never loads OpenTelemetry.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from phasegate.errors import UsageError
from phasegate.telemetry.events import (
    AttemptBlocked,
    PhaseCompleted,
    PhaseGateChecked,
    PhaseMarker,
    PhaseStarted,
    RetryScheduled,
    RunCompleted,
    RunEvent,
    RunStarted,
    ToolCalled,
)

_SYSTEM = "anthropic"


class OtelSink:
    """Turns run events into spans and metrics (``tracer_provider``/``meter_provider``
    default to the global ones)."""

    def __init__(self, *, tracer_provider: Any = None, meter_provider: Any = None) -> None:
        try:
            from opentelemetry import metrics, trace
        except ImportError:
            raise UsageError(
                "OpenTelemetry export needs the otel extra: pip install 'phasegate[otel]'"
            ) from None
        self._trace = trace
        self._tracer = trace.get_tracer("phasegate", tracer_provider=tracer_provider)
        meter = metrics.get_meter("phasegate", meter_provider=meter_provider)
        self._tokens = meter.create_histogram(
            "gen_ai.client.token.usage", unit="{token}", description="Tokens used by a run."
        )
        self._duration = meter.create_histogram(
            "gen_ai.client.operation.duration", unit="s", description="Wall time of a run."
        )
        self._completions = meter.create_counter(
            "phasegate.phase.completions", description="Phases by final status."
        )
        self._attempts = meter.create_histogram(
            "phasegate.phase.attempts", description="Gate checks a phase went through."
        )
        self._tool_errors = meter.create_counter(
            "phasegate.tool.errors", description="Tool calls that failed."
        )
        self._runs = meter.create_counter("phasegate.runs", description="Runs by verdict.")
        self._cost = meter.create_counter(
            "phasegate.run.cost", unit="USD", description="Cost of runs, where known."
        )
        self._runs_open: dict[str, Any] = {}
        self._phase_starts: dict[tuple[str, int], int] = {}

    def __call__(self, event: RunEvent) -> None:
        """Record one event."""
        common = {"phasegate.task": event.task, "phasegate.mode": event.mode}
        span = self._runs_open.get(event.run_id)
        stamp = _nanos(event.timestamp)
        match event.data:
            case RunStarted(agent=agent):
                self._runs_open[event.run_id] = self._tracer.start_span(
                    f"invoke_agent {event.task}",
                    start_time=stamp,
                    attributes={
                        **common,
                        "gen_ai.operation.name": "invoke_agent",
                        "gen_ai.system": _SYSTEM,
                        "gen_ai.agent.name": agent,
                        "phasegate.run_id": event.run_id,
                    },
                )
            case PhaseStarted(phase=phase):
                self._phase_starts.setdefault((event.run_id, phase), stamp)
            case ToolCalled(ok=ok, tool=tool):
                if not ok:
                    self._tool_errors.add(1, {**common, "gen_ai.tool.name": str(tool)})
                if span is not None:
                    span.add_event(event.event, _attributes(event.fields), stamp)
            case PhaseGateChecked() | PhaseMarker() | RetryScheduled() | AttemptBlocked() if (
                span is not None
            ):
                span.add_event(event.event, _attributes(event.fields), stamp)
            case PhaseCompleted() as phase:
                self._phase_completed(event.run_id, phase, stamp, span, common)
            case RunCompleted() as run:
                self._run_completed(event.run_id, run, stamp, span, common)

    def _phase_completed(
        self, run_id: str, phase: PhaseCompleted, stamp: int, run_span: Any, common: dict[str, str]
    ) -> None:
        start = self._phase_starts.pop((run_id, phase.phase), None)
        attributes: dict[str, Any] = {
            **common,
            "phasegate.phase": phase.phase,
            "phasegate.phase.name": phase.name,
            "phasegate.phase.status": phase.status,
        }
        self._completions.add(1, attributes)
        self._attempts.record(phase.attempts, attributes)
        if run_span is None:
            return
        if start is None:
            start = stamp
        context = self._trace.set_span_in_context(run_span)
        span = self._tracer.start_span(f"phase {phase.name}", context=context,
                                       start_time=start, attributes={
            **attributes,
            "phasegate.phase.attempts": phase.attempts,
            **_usage(phase.input_tokens, phase.output_tokens),
            **_overhead(phase.overhead),
        })  # fmt: skip
        if phase.status == "rejected":
            span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, "rejected"))
        span.end(end_time=start + phase.duration_ms * 1_000_000)

    def _run_completed(
        self, run_id: str, run: RunCompleted, stamp: int, span: Any, common: dict[str, str]
    ) -> None:
        base = {**common, "gen_ai.operation.name": "invoke_agent", "gen_ai.system": _SYSTEM}
        for kind, tokens in (("input", run.input_tokens), ("output", run.output_tokens)):
            self._tokens.record(tokens, {**base, "gen_ai.token.type": kind})
        self._duration.record(run.duration_ms / 1000, base)
        self._runs.add(1, {**common, "phasegate.verdict": run.verdict})
        if run.cost_usd is not None:
            self._cost.add(run.cost_usd, common)
        if span is None:
            return
        span.set_attributes(
            {
                "phasegate.verdict": run.verdict,
                **_usage(run.input_tokens, run.output_tokens),
                **_overhead(run.overhead),
            }
        )
        if run.verdict != "accepted":
            message = run.error or run.verdict
            span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, message))
        span.end(end_time=stamp)
        del self._runs_open[run_id]


def _usage(input_tokens: int, output_tokens: int) -> dict[str, int]:
    """The GenAI token attributes of a phase or run span."""
    return {"gen_ai.usage.input_tokens": input_tokens, "gen_ai.usage.output_tokens": output_tokens}


def _overhead(overhead: dict[str, Any]) -> dict[str, int]:
    """What the gate added to a phase's or run's input, as ``phasegate.overhead.*``
    attributes (its ``requests``, ``input_tokens`` carried, ``tool_tokens``, ``text_tokens``)."""
    return {
        f"phasegate.overhead.{name}": value
        for name, value in overhead.items()
        if name in ("requests", "input_tokens", "tool_tokens", "text_tokens")
        and isinstance(value, int)
    }


def _nanos(timestamp: str) -> int:
    try:
        return int(datetime.fromisoformat(timestamp).timestamp() * 1e9)
    except ValueError:
        return time.time_ns()


def _attributes(fields: dict[str, Any]) -> dict[str, Any]:
    """Event fields as span attributes: scalars and lists of strings only."""
    kept: dict[str, Any] = {}
    for key, value in fields.items():
        scalar = isinstance(value, str | bool | int | float)
        if scalar or (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            kept[f"phasegate.{key}"] = value
    return kept
