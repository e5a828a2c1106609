"""What ``phasegate report`` costs over a large log, as a ratio against a parse-only baseline.

A synthetic log of 1,000,000 events (shaped like the runner's) is written once. Then, each in
a fresh process, so start-up and reading count for both:

* the baseline reads the same lines and only parses each with the fastest JSON parser
  phasegate depends on (pydantic_core's ``from_json``, about 3x the standard library's);
* ``phasegate report --format json`` reads, aggregates and prints the report.

It prints median wall times over three runs each, the ratio (target: <= 1.25x), and the peak
RSS of the report over 100k and 1M events (target: flat as the log grows). It prints the
ratio of CPU times (user + system) too: on a machine shared with other work, wall times wander
with the load, CPU times much less.

Run with ``.venv/bin/python bench/report.py [EVENTS]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from phasegate.testing.event_log import synthetic_log_lines

BASELINE = """
import sys
from pydantic_core import from_json
count = 0
with open(sys.argv[1], "rb") as handle:
    for line in handle:
        if line.strip():
            from_json(line)
            count += 1
print(count)
"""


def write_log(path: Path, events: int) -> None:
    """The synthetic log, written in one pass."""
    with path.open("w", encoding="utf-8") as handle:
        for line in synthetic_log_lines(events, seed=1):
            handle.write(line + "\n")


def timed(argv: list[str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds and peak RSS (MiB) of one child process; its output is
    discarded."""
    started = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(
            f"{argv[:4]} failed: {child.stderr.read().decode() if child.stderr else ''}"
        )
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024


def median(argv: list[str], repeat: int = 3) -> tuple[float, float, int]:
    """Median wall and CPU times and the highest peak RSS over ``repeat`` runs."""
    runs = [timed(argv) for _ in range(repeat)]
    return (
        statistics.median(wall for wall, _, _ in runs),
        statistics.median(cpu for _, cpu, _ in runs),
        max(rss for _, _, rss in runs),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "events", nargs="?", type=int, default=1_000_000, help="events in the large log"
    )
    events = parser.parse_args().events
    if events < 10:
        parser.error("events must be at least 10")
    report = [sys.executable, "-m", "phasegate", "report", "--format", "json"]
    with tempfile.TemporaryDirectory(prefix="phasegate-bench-") as tmp:
        rss: dict[int, int] = {}
        for size in sorted({events // 10, events}):
            log = Path(tmp) / f"events-{size}.jsonl"
            write_log(log, size)
            megabytes = log.stat().st_size / 2**20
            base_time, base_cpu, base_rss = median([sys.executable, "-c", BASELINE, str(log)])
            report_time, report_cpu, report_rss = median([*report, str(log)])
            rss[size] = report_rss
            print(f"{size:>9,} events ({megabytes:,.0f} MiB): parse-only {base_time:6.2f} s "
                  f"(peak {base_rss} MiB)  report {report_time:6.2f} s (peak {report_rss} MiB)  "
                  f"ratio {report_time / base_time:.2f}x  (CPU {base_cpu:.2f} s / "
                  f"{report_cpu:.2f} s: {report_cpu / base_cpu:.2f}x)")  # fmt: skip
        small, large = sorted(rss)
        print(f"peak RSS of the report: {rss[small]} MiB at {small:,} events, "
              f"{rss[large]} MiB at {large:,} events")  # fmt: skip


if __name__ == "__main__":
    main()
