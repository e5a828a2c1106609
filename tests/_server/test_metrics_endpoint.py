"""``GET /metrics``: a real service's runs in the Prometheus text format, scraped over HTTP;
the Grafana dashboard under docs/ names only what it exposes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.helpers.service import running_service

pytestmark = pytest.mark.cli

DASHBOARD = Path(__file__).parents[2] / "docs" / "grafana" / "phasegate.json"
TASK = "fix-vulnerability"


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a scrape: (name, sorted labels) to value."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def _families(text: str) -> set[str]:
    return {family.name for family in text_string_to_metric_families(text)}


def _expressions(node: object) -> list[str]:
    """Every ``expr`` of a dashboard (panels, rows, templating), wherever it is nested."""
    if isinstance(node, dict):
        found = [node["expr"]] if isinstance(node.get("expr"), str) else []
        return found + [e for value in node.values() for e in _expressions(value)]
    if isinstance(node, list):
        return [e for item in node for e in _expressions(item)]
    return []


_FUNCTIONS = {"sum", "rate", "increase", "by", "without", "histogram_quantile", "le",
              "clamp_min", "avg", "max", "min", "count", "on", "ignoring", "topk", "irate", "or",
              "and", "unless", "offset", "vector", "scalar", "bool", "group_left",
              "group_right"}  # fmt: skip


def _metric_names(expr: str) -> set[str]:
    """The metric names of a PromQL expression: identifiers outside quotes, braces'
    label matchers, ranges and functions."""
    text = re.sub(r'"[^"]*"', '""', expr)
    text = re.sub(r"\{[^}]*\}", "", text)
    text = re.sub(r"\[[^\]]*\]", "", text)
    text = re.sub(r"\b(by|without|on|ignoring)\s*\([^)]*\)", "", text)
    names = {
        found.group()
        for found in re.finditer(r"(?<![\w.])[a-zA-Z_:][a-zA-Z0-9_:]*", text)
        if not text[found.end() :].lstrip().startswith("(")
    }
    return names - _FUNCTIONS


def test_metrics_count_the_runs_survive_a_restart_and_need_the_token(root: Path) -> None:
    script = root / "scripts" / "task.yaml"
    with running_service(root, "--model-script", script) as service:
        client = service.client()
        anonymous = httpx.get(f"{service.url}/metrics", timeout=30)
        runs = [service.start_run(client, task="task.yaml", workdir="project",
                                  copy_workdir=True) for _ in range(2)]  # fmt: skip
        ended = [service.wait(client, run["id"]) for run in runs]
        scraped = client.get("/metrics")

    assert anonymous.status_code == 401
    assert scraped.status_code == 200, scraped.text
    assert scraped.headers["content-type"].startswith("text/plain; version=0.0.4")
    samples = _samples(scraped.text)
    labels = (("mode", "gate"), ("task", TASK))
    assert [run["verdict"] for run in ended] == ["accepted", "accepted"]
    assert samples[("phasegate_runs_total", (("mode", "gate"), ("task", TASK),
                                             ("verdict", "accepted")))] == 2  # fmt: skip
    # Tokens, attempts and refusals: what the runs' own reports say, added up.
    reports = [run["report"] for run in ended]
    tokens_in = sum(r["usage"]["input_tokens"] for r in reports)
    assert samples[("phasegate_tokens_total", (("kind", "input"),))] == tokens_in > 0
    logs = [json.loads(line) for run in ended for line in _log(root, run["id"])]
    completed = [e for e in logs if e["event"] == "run.completed"]
    assert samples[("phasegate_phase_attempts_total", labels)] == sum(
        e["attempts"] for e in completed
    )
    assert samples[("phasegate_tool_refusals_total", labels)] == sum(
        e.get("refusals", 0) for e in completed
    )
    assert samples[("phasegate_run_duration_seconds_count", ())] == 2
    assert samples[("phasegate_runs_queued", ())] == 0
    assert samples[("phasegate_runs_running", ())] == 0
    assert samples[("phasegate_event_streams_open", ())] == 0

    # A new service on the same root counts the runs on disk again.
    with running_service(root) as again:
        rescraped = again.client().get("/metrics")
    after = _samples(rescraped.text)
    kept = ("phasegate_runs_total", "phasegate_tokens_total", "phasegate_cost_usd_total",
            "phasegate_phase_attempts_total", "phasegate_run_duration_seconds_count")  # fmt: skip
    for key in kept:
        assert {k: v for k, v in after.items() if k[0] == key} == {
            k: v for k, v in samples.items() if k[0] == key
        }, key

    # The dashboard's queries name only metrics this scrape has.
    exposed = _families(scraped.text) | {sample_name for (sample_name, _) in samples}
    dashboard = json.loads(DASHBOARD.read_text())
    expressions = _expressions(dashboard)
    assert len(expressions) >= 8
    named = {name for expr in expressions for name in _metric_names(expr)}
    assert named, expressions
    assert named <= exposed, named - exposed


def test_the_query_parser_finds_names_and_not_functions_or_labels() -> None:
    expr = ('histogram_quantile(0.95, sum by (le) (rate(phasegate_run_duration_seconds_bucket'
            '{task=~"$task"}[5m]))) / clamp_min(sum(phasegate_runs_total), 1)')  # fmt: skip

    assert _metric_names(expr) == {"phasegate_run_duration_seconds_bucket",
                                   "phasegate_runs_total"}  # fmt: skip


def _log(root: Path, run_id: str) -> list[str]:
    return (root / ".phasegate" / "runs" / run_id / "events.jsonl").read_text().splitlines()
