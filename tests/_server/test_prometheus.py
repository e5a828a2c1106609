"""A real Prometheus (Debian's, `make prometheus`) scrapes a real service; a PromQL query over
its HTTP API counts the runs the service made.

Skipped when ``prometheus`` is not on PATH, unless PHASEGATE_REQUIRE_PROMETHEUS=1 (as in CI),
which turns the skip into a failure.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
import yaml

from tests.helpers.service import running_service

pytestmark = pytest.mark.cli

PROMETHEUS = shutil.which("prometheus")
REQUIRED = os.environ.get("PHASEGATE_REQUIRE_PROMETHEUS") == "1"
DEADLINE = 90.0
"""Seconds Prometheus has to start, scrape and answer (it scrapes every second)."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextlib.contextmanager
def _prometheus(tmp_path: Path, target: str, token_file: Path) -> Iterator[str]:
    """Prometheus on 127.0.0.1 scraping ``target`` every second with the token; its URL."""
    if PROMETHEUS is None:
        pytest.fail("PHASEGATE_REQUIRE_PROMETHEUS=1 but prometheus is not on PATH: "
                    "`make prometheus`")  # fmt: skip
    config = tmp_path / "prometheus.yml"
    config.write_text(yaml.safe_dump({
        "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
        "scrape_configs": [{
            "job_name": "phasegate",
            "metrics_path": "/metrics",
            "authorization": {"credentials_file": str(token_file)},
            "static_configs": [{"targets": [target]}],
        }],
    }))  # fmt: skip
    address = f"127.0.0.1:{_free_port()}"
    log = tmp_path / "prometheus.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [PROMETHEUS, f"--config.file={config}", f"--web.listen-address={address}",
             f"--storage.tsdb.path={tmp_path / 'tsdb'}"],
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:
        yield f"http://{address}"
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _query_until(url: str, query: str, expected: float) -> float:
    """Ask ``query`` until it equals ``expected`` or the deadline passes; the last value
    (None's stand-in: -1 when it had no result)."""
    deadline = time.monotonic() + DEADLINE
    value = -1.0
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            answer = httpx.get(f"{url}/api/v1/query", params={"query": query}, timeout=5)
            if answer.status_code == 200:
                result = answer.json()["data"]["result"]
                value = float(result[0]["value"][1]) if result else -1.0
                if value == expected:
                    return value
        time.sleep(0.25)  # a poll interval, bounded by the deadline: no timing is asserted
    return value


@pytest.mark.skipif(PROMETHEUS is None and not REQUIRED,
                    reason="no prometheus on PATH (`make prometheus`)")  # fmt: skip
def test_a_real_prometheus_counts_the_runs_the_service_made(root: Path, tmp_path: Path) -> None:
    script = root / "scripts" / "task.yaml"
    with running_service(root, "--model-script", script) as service:
        token_file = root / ".phasegate" / "server-token"
        target = urlsplit(service.url).netloc
        with _prometheus(tmp_path, target, token_file) as url:
            client = service.client()
            runs = [service.start_run(client, task="task.yaml", workdir="project",
                                      copy_workdir=True) for _ in range(2)]  # fmt: skip
            ended = [service.wait(client, run["id"]) for run in runs]
            tokens = sum(run["report"]["usage"]["input_tokens"] for run in ended)

            up = _query_until(url, 'up{job="phasegate"}', 1)
            accepted = _query_until(
                url, 'sum(phasegate_runs_total{verdict="accepted", task="fix-vulnerability"})', 2
            )
            scraped_tokens = _query_until(
                url, 'sum(phasegate_tokens_total{kind="input"})', float(tokens)
            )
            running = _query_until(url, "phasegate_runs_running", 0)

    log = (tmp_path / "prometheus.log").read_text()[-2000:]
    assert up == 1, log
    assert [run["verdict"] for run in ended] == ["accepted", "accepted"]
    assert accepted == 2, log
    assert scraped_tokens == tokens > 0, log
    assert running == 0
