"""The service's cost: a run over HTTP against the same run through ``Runner`` in one process,
and how long an event takes from its log line to an SSE client.

The run is the good scenario of examples/fix-vulnerability (the real Claude Code CLI against
phasegate's offline scripted model server; accepted on the second gate check), each time in a
fresh copy of the project. It runs

* as the baseline: ``Runner(...).run(task, copy)`` in this process, a scripted model server
  started for each run, the copy made and timed with it;
* through ``phasegate serve --max-concurrent 1``: ``POST /v1/runs`` with ``copy_workdir``,
  then its event stream followed until ``done``; timed from the POST to ``done``.

Runs alternate between the two, so both see the same machine. It prints the median of each,
their ratio (target, printed, not enforced: at most 1.10x), and the latency of every event,
from the timestamp in its log line to its arrival at the client, as p50 and p99 (the
timestamp has millisecond resolution). Run with ``make bench`` or ``.venv/bin/python
bench/serve.py [--runs N]``; it stops with an error when a run is not accepted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import NoReturn

import httpx

from phasegate import Runner, load_task
from phasegate.agents.scripted.model_server import ScriptedModelServer

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "fix-vulnerability"
TARGET_RATIO = 1.10


def fail(message: str) -> NoReturn:
    sys.exit(f"bench/serve.py: {message}")


def in_process(scratch: Path, number: int) -> float:
    """One run through Runner in this process; its seconds."""
    started = time.perf_counter()
    work = scratch / f"direct-{number}"
    shutil.copytree(EXAMPLE / "project", work)
    with ScriptedModelServer(EXAMPLE / "model.yaml") as server:
        report = asyncio.run(
            Runner(server.claude_agent()).run(load_task(EXAMPLE / "task.yaml"), work)
        )
    if report.verdict != "accepted":
        fail(f"the in-process run ended {report.verdict}: {report.error}")
    return time.perf_counter() - started


def over_http(client: httpx.Client, latencies: list[float]) -> float:
    """One run through the service; its seconds. Each event's latency goes to ``latencies``."""
    started = time.perf_counter()
    answer = client.post("/v1/runs", json={"task": "task.yaml", "workdir": "project",
                                           "copy_workdir": True})  # fmt: skip
    if answer.status_code != 202:
        fail(f"POST /v1/runs answered {answer.status_code}: {answer.text}")
    run_id = answer.json()["id"]
    done = None
    with client.stream("GET", f"/v1/runs/{run_id}/events") as stream:
        for line in stream.iter_lines():
            if not line.startswith("data: "):
                continue
            arrived = time.time()
            event = json.loads(line.removeprefix("data: "))
            latencies.append(arrived - datetime.fromisoformat(event["timestamp"]).timestamp())
            if event["event"] == "done":
                done = event
    seconds = time.perf_counter() - started
    if done is None or done["verdict"] != "accepted":
        fail(f"the run over HTTP ended {done}")
    return seconds


def start_service(root: Path) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "phasegate", "serve", "--root", str(root), "--port", "0",
         "--max-concurrent", "1", "--model-script", str(EXAMPLE / "model.yaml")],
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stderr is not None
    for line in process.stderr:
        if "listening on " in line:
            return process, line.split("listening on ", 1)[1].strip()
    fail("phasegate serve did not start")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=6, help="runs of each kind (default 6)")
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory(prefix="phasegate-bench-serve-") as scratch:
        root = Path(scratch) / "root"
        shutil.copytree(EXAMPLE / "project", root / "project")
        shutil.copy(EXAMPLE / "task.yaml", root / "task.yaml")
        process, url = start_service(root)
        token = (root / ".phasegate" / "server-token").read_text().strip()
        latencies: list[float] = []
        direct: list[float] = []
        served: list[float] = []
        try:
            with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"},
                              timeout=120) as client:  # fmt: skip
                over_http(client, [])  # warm-up: the first run also starts the spare process
                in_process(Path(scratch), 0)
                for number in range(1, runs + 1):
                    direct.append(in_process(Path(scratch), number))
                    served.append(over_http(client, latencies))
        finally:
            process.terminate()
            process.wait()
    base, http = statistics.median(direct), statistics.median(served)
    ratio = http / base
    print(f"runs of each kind:            {runs}")
    print(f"Runner in one process:        median {base:.2f} s")
    print(f"over HTTP (POST to done):     median {http:.2f} s")
    verdict = "meets" if ratio <= TARGET_RATIO else "misses"
    print(
        f"ratio:                        {ratio:.3f}x ({verdict} the target of {TARGET_RATIO:.2f}x)"
    )
    p50, p99 = (percentile(latencies, share) * 1000 for share in (0.5, 0.99))
    print(f"event log line to SSE client: p50 {p50:.1f} ms, p99 {p99:.1f} ms "
          f"over {len(latencies)} events")  # fmt: skip


if __name__ == "__main__":
    main()
