"""``GET /metrics``: the service's runs in the Prometheus text format (prometheus-client).

The figures come from the runs' own event logs, read by the same aggregation as
``phasegate report`` (:class:`~phasegate.metrics.aggregate.LogAggregator`), when a run ends:
its verdict (or its status, when it has none: ``cancelled``, ``failed``, ``interrupted``),
gate checks, refused calls, tokens and cost, and its wall time from start to end in the
service as a histogram. At start the service counts every ended run on disk the same way, so
the counters survive a restart as far as the runs' folders do (a resumed run counts once
after a restart, once per end before one). The gauges (queued, running, open streams) are
read from the service at each scrape. Each service has its own registry: nothing global.
"""

from __future__ import annotations

from collections import Counter as Tally
from collections.abc import Callable, Iterator
from datetime import datetime
from itertools import islice
from pathlib import Path

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import Collector

from phasegate._server.records import RunRecord

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
"""The text format's media type: 0.0.4, which every Prometheus reads (the names here are
plain, so the text is the same in 1.0.0, which prometheus-client offers as its latest)."""
DURATION_BUCKETS = (1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, float("inf"))
"""Upper bounds (seconds) of the run duration histogram's buckets."""
METRIC_NAMES = (
    "phasegate_runs_total",
    "phasegate_phase_attempts_total",
    "phasegate_tool_refusals_total",
    "phasegate_tokens_total",
    "phasegate_cost_usd_total",
    "phasegate_run_duration_seconds",
    "phasegate_runs_queued",
    "phasegate_runs_running",
    "phasegate_event_streams_open",
)
"""Every metric family the endpoint exposes (a histogram as its base name)."""


class _Gauges(Collector):
    """The service's state at scrape time."""

    def __init__(self, read: Callable[[], tuple[int, int, int]]) -> None:
        self.read = read

    def collect(self) -> Iterator[Metric]:
        queued, running, streams = self.read()
        yield GaugeMetricFamily("phasegate_runs_queued", "Runs waiting for a slot.", queued)
        yield GaugeMetricFamily("phasegate_runs_running", "Runs being carried out.", running)
        yield GaugeMetricFamily(
            "phasegate_event_streams_open", "Server-Sent Event streams open.", streams
        )


class ServiceMetrics:
    """The counters of one service; :meth:`count` each run as it ends, :meth:`render` to scrape."""

    def __init__(self, read_gauges: Callable[[], tuple[int, int, int]]) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        labels = ("mode", "task")
        self.runs = Counter("phasegate_runs", "Runs ended, by verdict (or status), mode, task.",
                            ("verdict", *labels), registry=self.registry)  # fmt: skip
        self.attempts = Counter("phasegate_phase_attempts", "Gate checks of the runs' phases "
                                "(a pipeline's stage exit checks).", labels,
                                registry=self.registry)  # fmt: skip
        self.refusals = Counter("phasegate_tool_refusals", "Tool calls refused before they ran.",
                                labels, registry=self.registry)  # fmt: skip
        self.tokens = Counter("phasegate_tokens", "Model tokens, by kind (input, output).",
                              ("kind",), registry=self.registry)  # fmt: skip
        self.cost = Counter("phasegate_cost_usd", "Model cost in US dollars, as reported.",
                            registry=self.registry)  # fmt: skip
        self.duration = Histogram("phasegate_run_duration_seconds", "Run wall time in the "
                                  "service, from start to end.", buckets=DURATION_BUCKETS,
                                  registry=self.registry)  # fmt: skip
        self.registry.register(_Gauges(read_gauges))
        self._read: Tally[str] = Tally()
        """Log lines already counted, by run: a resumed run's second end adds only its own."""

    def count(self, record: RunRecord, events: Path) -> None:
        """Add the run of ``record`` (ended), and what its log ``events`` says since it was
        last counted."""
        from phasegate.metrics.aggregate import LogAggregator
        from phasegate.metrics.reading import LogReader

        aggregator = LogAggregator()
        if events.is_file():
            lines = islice(LogReader([str(events)]).lines(), self._read[record.id], None)
            aggregator.add_lines(lines)
            self._read[record.id] += aggregator.lines
        mode = str(record.mode or record.isolation or "")
        self.runs.labels(record.verdict or record.status, mode, record.name).inc()
        stats = list(aggregator.runs.values())
        self.attempts.labels(mode, record.name).inc(sum(s.attempts for s in stats))
        self.refusals.labels(mode, record.name).inc(sum(s.refusals for s in stats))
        self.tokens.labels("input").inc(sum(s.input_tokens for s in stats))
        self.tokens.labels("output").inc(sum(s.output_tokens for s in stats))
        self.cost.inc(sum(s.cost_usd for s in stats))
        if record.started_at and record.finished_at:
            start, end = _moment(record.started_at), _moment(record.finished_at)
            self.duration.observe(max((end - start).total_seconds(), 0.0))

    def render(self) -> bytes:
        """The text format of every metric."""
        return generate_latest(self.registry)


def _moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
