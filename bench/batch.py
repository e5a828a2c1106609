"""Batch throughput: ``phasegate batch run`` at concurrency 1, 2 and 4 against sequential runs.

The units are 20 runs of the good scenario: examples/fix-vulnerability behind the gate, with
its scripted model (the real Claude Code CLI against phasegate's offline scripted model
server; the model claims the fix, gets the gate's feedback, makes the edit, and is accepted
on the second check). They run

* as one batch (a batch file with ``repeats: 20``), through ``phasegate batch run`` at
  concurrency 1, 2 and 4, each into a fresh output directory;
* as the baseline: 20 ``phasegate run --model-script ...`` processes one after the other,
  each in a fresh copy of the project (the copy is timed too: a batch unit makes one).

It prints units per minute for each and the ratio to sequential (target, printed, not
enforced: at concurrency 2 at least 1.6x), and the memory of the batch: the resident set
(RSS, from /proc, every 50 ms) of the batch process, and the peak of one running unit (its
process and everything it started: the Claude Code CLI) and of all units at once. RSS counts
shared pages in every process that maps them, so the sums are upper bounds.

Run with ``make bench`` or ``.venv/bin/python bench/batch.py [--units N]``. It stops with an
error when a run is not accepted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "fix-vulnerability"
PHASEGATE = Path(sys.executable).with_name("phasegate")
CONCURRENCY = (1, 2, 4)
TARGET_RATIO = 1.6
"""Concurrency 2 against sequential, on a 2-core machine."""
SAMPLE_SECONDS = 0.05
PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True, slots=True)
class Memory:
    """Peaks of resident memory over one batch run, in bytes."""

    batch: int
    """The batch process alone."""
    unit: int
    """One unit: its process and its descendants (the CLI)."""
    units: int
    """Every unit running at one moment, together."""
    most_running: int
    """The most units seen running at one sample."""


@dataclass(frozen=True, slots=True)
class Timing:
    """One way of running the units."""

    label: str
    seconds: float
    memory: Memory | None = None

    def per_minute(self, units: int) -> float:
        return units / self.seconds * 60


def fail(message: str) -> NoReturn:
    sys.exit(f"bench/batch.py: {message}")


def rss(pid: int) -> int:
    """The resident set of ``pid`` in bytes (0 when it has ended)."""
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return 0


def children(pid: int) -> list[int]:
    """The child processes of ``pid``, from every one of its threads."""
    found: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return found
    for task in tasks:
        try:
            found.extend(int(child) for child in (task / "children").read_text().split())
        except (OSError, ValueError):
            continue
    return found


def tree_rss(pid: int) -> int:
    """``pid`` and all its descendants, in bytes."""
    return rss(pid) + sum(tree_rss(child) for child in children(pid))


class MemoryWatch:
    """Samples a batch process and its unit processes on a thread until stopped."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.batch = self.unit = self.units = self.most_running = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> MemoryWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._stop.wait(SAMPLE_SECONDS):
            self.batch = max(self.batch, rss(self.pid))
            units = [tree_rss(child) for child in children(self.pid)]
            units = [size for size in units if size > 0]
            if units:
                self.unit = max(self.unit, *units)
                self.units = max(self.units, sum(units))
                self.most_running = max(self.most_running, len(units))

    def peaks(self) -> Memory:
        return Memory(self.batch, self.unit, self.units, self.most_running)


def batch_file(directory: Path, units: int) -> Path:
    """A batch of ``units`` repeats of the example in gate mode (absolute paths)."""
    path = directory / "batch.json"
    batch = {
        "name": "bench-good-scenario",
        "items": [
            {
                "task": str(EXAMPLE / "task.yaml"),
                "workdir": str(EXAMPLE / "project"),
                "model_script": str(EXAMPLE / "model.yaml"),
                "modes": ["gate"],
                "repeats": units,
                "timeout": 300,
            }
        ],
    }
    path.write_text(json.dumps(batch, indent=2), encoding="utf-8")
    return path


def run_batch(batch: Path, out: Path, concurrency: int, units: int) -> Timing:
    """One ``batch run`` into the fresh directory ``out``; every unit must be accepted."""
    command = [str(PHASEGATE), "batch", "run", str(batch), "--out", str(out),
               "--concurrency", str(concurrency), "--quiet", "--json"]  # fmt: skip
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with MemoryWatch(process.pid) as watch:
        stdout, stderr = process.communicate(timeout=1800)
    seconds = time.perf_counter() - start
    if process.returncode != 0:
        fail(f"batch run exited {process.returncode}: {stderr.decode()[-2000:]}")
    summary = json.loads(stdout)
    if summary["accepted"] != units or summary["unfinished"]:
        fail(f"batch run at concurrency {concurrency} accepted {summary['accepted']} of {units}")
    return Timing(f"batch run, concurrency {concurrency}", seconds, watch.peaks())


def run_sequential(scratch: Path, units: int) -> Timing:
    """``units`` ``phasegate run`` processes one after the other, each in a fresh copy."""
    start = time.perf_counter()
    for number in range(units):
        work = scratch / f"work-{number}"
        shutil.copytree(EXAMPLE / "project", work, symlinks=True)
        done = subprocess.run(
            [str(PHASEGATE), "run", str(EXAMPLE / "task.yaml"), "--workdir", str(work),
             "--model-script", str(EXAMPLE / "model.yaml"), "--quiet", "--json"],
            capture_output=True, timeout=300, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            fail(f"sequential run {number + 1} exited {done.returncode}: {done.stderr[-2000:]!r}")
        shutil.rmtree(work)
    return Timing("sequential phasegate run", time.perf_counter() - start)


def mib(size: int) -> str:
    return f"{size / 2**20:6.0f} MiB"


def memory_line(memory: Memory) -> str:
    """Peak RSS of one batch run, per concurrent unit too."""
    running = max(1, memory.most_running)
    return (
        f"    peak RSS: batch process {mib(memory.batch)}, one unit {mib(memory.unit)}, "
        f"all units {mib(memory.units)} ({memory.most_running} running at most; "
        f"{mib(memory.units // running)} per concurrent unit)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--units", type=int, default=20, help="units per run (default 20)")
    units = parser.parse_args().units
    if not PHASEGATE.is_file():
        fail(f"{PHASEGATE} is missing: install phasegate into this Python (make .venv/.installed)")
    print(f"{units} units of examples/fix-vulnerability (gate, scripted model); "
          f"{os.cpu_count()} CPUs")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="phasegate-bench-batch-") as directory:
        scratch = Path(directory)
        batch = batch_file(scratch, units)
        sequential = run_sequential(scratch, units)
        timings = [
            run_batch(batch, scratch / f"out-{concurrency}", concurrency, units)
            for concurrency in CONCURRENCY
        ]
    base = sequential.per_minute(units)
    print(f"{sequential.label:<28} {sequential.seconds:6.1f} s {base:6.1f} units/min   1.00x")
    for timing in timings:
        rate = timing.per_minute(units)
        print(f"{timing.label:<28} {timing.seconds:6.1f} s {rate:6.1f} units/min "
              f"{rate / base:6.2f}x")  # fmt: skip
        if timing.memory is not None:
            print(memory_line(timing.memory))
    ratio = timings[CONCURRENCY.index(2)].per_minute(units) / base
    verdict = "met" if ratio >= TARGET_RATIO else "NOT met"
    print(f"target: concurrency 2 >= {TARGET_RATIO}x sequential: {ratio:.2f}x, {verdict}")


if __name__ == "__main__":
    main()
