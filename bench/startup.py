"""What the command line costs to start, as a ratio against ``import claude_agent_sdk``.

Every side runs in a fresh interpreter, so start-up and imports count in full:

* the baseline only imports claude_agent_sdk (what any script that drives Claude Code pays
  before doing anything);
* ``phasegate --help`` (target: at most 0.2x the baseline, median of the pair ratios), and,
  for the record, the help of the commands people start most: ``run``, ``check``, ``judge``
  and ``report``.

Each command runs in pairs with the baseline (the order flipped every pair), so a drift in
the machine's speed hits both sides of a ratio. It prints each side's median wall time, the
median of the ratios pair by pair, and the same for CPU time (user + system), which wanders
much less than wall time on a machine shared with other work, and whether ``--help`` met
its target (in wall or CPU time).

What ``--help`` imports is held by a test (tests/_cli/test_startup_imports.py: no
claude_agent_sdk, no report models, no validators); this script measures what that buys.

Measured on a shared 2-core machine (2026-11-27, load about 1.5), 15 pairs: before the
commands' help was listed without importing them, ``--help`` took 0.52 s against 1.03 s
(0.50x wall, 0.61x CPU); after, 0.16 s against 1.00 s (0.16x wall, 0.17x CPU).

Run with ``.venv/bin/python bench/startup.py [--pairs N]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass

TARGET = 0.2
"""Largest ratio of ``phasegate --help`` to ``import claude_agent_sdk`` (issue 43, item 8)."""

BASELINE = [sys.executable, "-c", "import claude_agent_sdk"]

COMMANDS = {
    "phasegate --help": ["--help"],
    "phasegate run --help": ["run", "--help"],
    "phasegate check --help": ["check", "--help"],
    "phasegate judge --help": ["judge", "--help"],
    "phasegate report --help": ["report", "--help"],
}


def timed(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one child process; its output is discarded."""
    started = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        error = child.stderr.read().decode() if child.stderr else ""
        raise SystemExit(f"{' '.join(argv)} failed: {error}")
    if child.stderr:
        child.stderr.close()
    return elapsed, usage.ru_utime + usage.ru_stime


@dataclass(frozen=True, slots=True)
class Paired:
    """Medians of each side over alternating runs, and the medians of the ratios pair by
    pair (steadier than the ratio of medians when the machine's speed drifts)."""

    base_wall: float
    base_cpu: float
    wall: float
    cpu: float
    ratio: float
    cpu_ratio: float


def paired(base: list[str], command: list[str], pairs: int) -> Paired:
    """Run ``base`` and ``command`` in turn ``pairs`` times (the order flipped every pair)."""
    bases, commands = [], []
    for index in range(pairs):
        if index % 2 == 0:
            bases.append(timed(base))
            commands.append(timed(command))
        else:
            commands.append(timed(command))
            bases.append(timed(base))
    pairs_ = list(zip(bases, commands, strict=True))
    return Paired(
        base_wall=statistics.median(wall for wall, _ in bases),
        base_cpu=statistics.median(cpu for _, cpu in bases),
        wall=statistics.median(wall for wall, _ in commands),
        cpu=statistics.median(cpu for _, cpu in commands),
        ratio=statistics.median(c[0] / b[0] for b, c in pairs_),
        cpu_ratio=statistics.median(c[1] / b[1] for b, c in pairs_),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=11, help="alternating runs of each side")
    parser.add_argument("--only-help", action="store_true", help="time `phasegate --help` alone")
    args = parser.parse_args()
    if args.pairs < 1:
        parser.error("pairs must be at least 1")
    # Warm the file cache, so the first pair does not pay for reading the files from disk.
    timed(BASELINE)
    timed([sys.executable, "-m", "phasegate", "--help"])
    results = {}
    for name, arguments in COMMANDS.items():
        if args.only_help and name != "phasegate --help":
            continue
        run = paired(BASELINE, [sys.executable, "-m", "phasegate", *arguments], args.pairs)
        results[name] = run
        print(f"{name:<24} {run.wall:5.2f} s  import claude_agent_sdk {run.base_wall:5.2f} s  "
              f"ratio {run.ratio:.2f}x  (CPU {run.cpu:.2f} s / {run.base_cpu:.2f} s: "
              f"{run.cpu_ratio:.2f}x)")  # fmt: skip
    help_ = results["phasegate --help"]
    met = min(help_.ratio, help_.cpu_ratio) <= TARGET
    print(f"target for phasegate --help: at most {TARGET}x: {'met' if met else 'MISSED'}")


if __name__ == "__main__":
    main()
