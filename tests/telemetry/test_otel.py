"""OpenTelemetry export: spans per run and phase, GenAI-named metrics, nothing without it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from phasegate import OtelSink, RunEvent, Runner, Task, UsageError
from phasegate.telemetry.events import PhaseCompleted, PhaseStarted, RunCompleted, RunStarted
from phasegate.testing import Script, ScriptedAgent, load_script
from tests.helpers.scenarios import EXAMPLE

if TYPE_CHECKING:
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader


def metric_points(reader: InMemoryMetricReader) -> dict[str, list[Any]]:
    """Data points by metric name."""
    points: dict[str, list[Any]] = {}
    data = reader.get_metrics_data()
    assert data is not None
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                points.setdefault(metric.name, []).extend(metric.data.data_points)
    return points


def test_a_run_becomes_a_span_with_a_child_span_per_phase_and_genai_metrics(
    task: Task, project: Path
) -> None:
    """The lazy model in gate mode: accepted after feedback, seen through OpenTelemetry.

    Only this test needs the OpenTelemetry SDK (the dev extra); the others are about doing
    without it, so they must not skip without it."""
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    sink = OtelSink(tracer_provider=tracer_provider, meter_provider=MeterProvider([reader]))
    agent = ScriptedAgent(load_script(EXAMPLE / "model.yaml"))

    report = Runner(agent, on_event=sink).run_sync(task, project)

    assert report.verdict == "accepted"
    spans = {span.name: span for span in exporter.get_finished_spans()}
    run = spans["invoke_agent fix-vulnerability"]
    assert run.attributes is not None
    assert run.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert run.attributes["phasegate.verdict"] == "accepted"
    for name in ("phase edit", "phase summary"):
        parent = spans[name].parent
        assert parent is not None and run.context is not None
        assert parent.span_id == run.context.span_id
    assert {event.name for event in run.events} >= {"tool.called", "phase.gate", "phase.marker"}
    points = metric_points(reader)
    kinds = {p.attributes["gen_ai.token.type"] for p in points["gen_ai.client.token.usage"]}
    assert kinds == {"input", "output"}
    assert len(points["gen_ai.client.operation.duration"]) == 1
    completions = {
        (p.attributes["phasegate.phase.name"], p.attributes["phasegate.phase.status"]): p.value
        for p in points["phasegate.phase.completions"]
    }
    assert completions == {("edit", "accepted"): 1, ("summary", "accepted"): 1}
    (runs,) = points["phasegate.runs"]
    assert (runs.attributes["phasegate.verdict"], runs.value) == ("accepted", 1)


def test_without_the_extra_nothing_of_opentelemetry_is_imported(tmp_path: Path) -> None:
    """A whole run through the public API leaves OpenTelemetry unloaded."""
    work = str(tmp_path / "w")
    code = (
        "import shutil, sys\n"
        "from phasegate import Runner, load_task\n"
        "from phasegate.testing import Script, ScriptedAgent, load_script\n"
        f"shutil.copytree({str(EXAMPLE / 'project')!r}, {work!r})\n"
        f"agent = ScriptedAgent(load_script({str(EXAMPLE / 'model.yaml')!r}))\n"
        f"Runner(agent).run_sync(load_task({str(EXAMPLE / 'task.yaml')!r}), {work!r})\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_asking_for_otel_without_the_extra_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The message says which extra to install."""
    monkeypatch.setitem(sys.modules, "opentelemetry", None)

    with pytest.raises(UsageError, match=r"pip install 'phasegate\[otel\]'"):
        OtelSink()


def test_a_rejected_run_marks_its_spans_as_errors_and_counts_failed_tools(
    task: Task, project: Path
) -> None:
    """Single-query mode takes the lazy model's claim once: the run and the edit phase end
    in error status, and the failed Edit call is counted by tool name."""
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import StatusCode

    from phasegate.testing import Script

    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    sink = OtelSink(tracer_provider=tracer_provider, meter_provider=MeterProvider([reader]))
    missing = {"Edit": {"file_path": "missing.py", "old_string": "a", "new_string": "b"}}
    script = Script.model_validate({"replies": [
        {"tools": [missing]}, {"when": "tool_error", "text": "Gave up."},
    ]})  # fmt: skip

    report = Runner(ScriptedAgent(script), mode="single-query", on_event=sink).run_sync(
        task, project
    )

    assert report.verdict == "rejected"
    spans = {span.name: span for span in exporter.get_finished_spans()}
    assert spans["invoke_agent fix-vulnerability"].status.status_code is StatusCode.ERROR
    assert spans["phase edit"].status.status_code is StatusCode.ERROR
    points = metric_points(reader)
    (errors,) = points["phasegate.tool.errors"]
    assert (errors.attributes["gen_ai.tool.name"], errors.value) == ("Edit", 1)
    (runs,) = points["phasegate.runs"]
    assert (runs.attributes["phasegate.verdict"], runs.value) == ("rejected", 1)


def test_the_phase_and_run_spans_say_what_the_gate_added_to_their_input() -> None:
    """``overhead`` of phase.completed and run.completed as ``phasegate.overhead.*``."""
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    sink = OtelSink(tracer_provider=tracer_provider)
    phase = {"requests": 3, "input_tokens": 9000, "tool_characters": 4008,
             "text_characters": 3777, "tool_tokens": 1002, "text_tokens": 945}  # fmt: skip
    run = {key: value * 2 for key, value in phase.items()}
    usage: dict[str, Any] = {"input_tokens": 1, "output_tokens": 1, "cost_usd": None}
    for data in (
        RunStarted(agent="claude", workdir="/w", phases=1, max_attempts=3),
        PhaseStarted(phase=1, name="edit"),
        PhaseCompleted(phase=1, name="edit", status="accepted", attempts=1, duration_ms=5,
                       completed_by="marker", tools={}, tool_errors=0, files_changed=[],
                       issues=[], overhead=phase, **usage),
        RunCompleted(verdict="accepted", attempts=1, duration_ms=9, files_changed=[],
                     findings=[], reverted=False, error=None, overhead=run, **usage),
    ):  # fmt: skip
        sink(RunEvent(data, "abc123def456", "t", "gate"))

    spans = {span.name: dict(span.attributes or {}) for span in exporter.get_finished_spans()}
    for name in ("requests", "input_tokens", "tool_tokens", "text_tokens"):
        assert spans["phase edit"][f"phasegate.overhead.{name}"] == phase[name]
        assert spans["invoke_agent t"][f"phasegate.overhead.{name}"] == run[name]
    assert "phasegate.overhead.tool_characters" not in spans["phase edit"]


def test_each_blocked_attempt_is_an_event_on_the_run_span(tmp_path: Path) -> None:
    """A Write outside the work directory of a run with a sandbox: ``sandbox.blocked`` on the
    run's span, with what was kept in."""
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    work, outside = tmp_path / "work", tmp_path / "outside.txt"
    work.mkdir()
    task = Task.model_validate({"name": "t", "sandbox": "optional",
                                "phases": [{"name": "work", "instructions": "Work."}]})  # fmt: skip
    script = Script.model_validate({"replies": [
        {"tools": [{"Write": {"file_path": str(outside), "content": "x"}}]},
        {"when": "tool_error", "text": "PHASE 1 COMPLETE: done"},
    ]})  # fmt: skip

    Runner(ScriptedAgent(script), on_event=OtelSink(tracer_provider=tracer_provider)).run_sync(
        task, work
    )

    (run,) = [s for s in exporter.get_finished_spans() if s.name == "invoke_agent t"]
    (blocked,) = [event for event in run.events if event.name == "sandbox.blocked"]
    assert blocked.attributes is not None
    attributes = blocked.attributes
    assert (attributes["phasegate.kind"], attributes["phasegate.target"]) == (
        "file_tool", str(outside),
    )  # fmt: skip
