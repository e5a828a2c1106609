"""What the command line costs to start, as a ratio against ``import claude_agent_sdk``.

Every side runs in a fresh interpreter, so start-up and imports count in full:

* the baseline only imports claude_agent_sdk (what any script that drives Claude Code pays
  before doing anything);
* ``phasegate --help`` (target: at most 0.2x the baseline, median of the pair ratios), and,
  for the record, the help of the commands people start most: ``run``, ``check``, ``judge``
  and ``report``;
* the floor of any typer command line: importing typer and the rich help it prints with.

Each command runs in pairs with the baseline (the order flipped every pair), so a drift in
the machine's speed hits both sides of a ratio. It prints each side's median wall time, the
median of the ratios pair by pair, and the same for CPU time (user + system), which wanders
much less than wall time on a machine shared with other work, and whether ``--help`` met
its target (in wall or CPU time).

What ``--help`` imports is held by a test (tests/_cli/test_startup_imports.py: no
claude_agent_sdk, no report models, no validators); this script measures what that buys.

Measured on a shared 2-core machine (2026-11-27, load 4 to 6, so read the CPU ratios), 15
pairs: before ``--help`` listed the commands from their summaries, it imported every
command's module (the execute command's report models and validators, the batch runner,
typer's pydantic adapters): 0.58 s CPU against 0.99 s, 0.57x (0.59x wall). After: 0.17 to
0.21 s CPU against 0.92 to 1.06 s, 0.19x (0.18x to 0.19x wall). The floor is typer and the
rich help it prints with, 0.15x wall and 0.16x CPU; what is left above it is phasegate's own
few modules and the help's rendering. A command's own help (``run``, ``check``, ``judge``,
``report``) is 0.30x to 0.34x: typer builds a pydantic adapter for each option, which
imports pydantic (about 0.1 s), whatever the command.

Run with ``.venv/bin/python bench/startup.py [--pairs N] [--only-help]``.
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

PHASEGATE = [sys.executable, "-m", "phasegate"]

COMMANDS = {
    "phasegate --help": [*PHASEGATE, "--help"],
    "phasegate run --help": [*PHASEGATE, "run", "--help"],
    "phasegate check --help": [*PHASEGATE, "check", "--help"],
    "phasegate judge --help": [*PHASEGATE, "judge", "--help"],
    "phasegate report --help": [*PHASEGATE, "report", "--help"],
    # The floor under any typer command line's help: typer and the rich help it prints with.
    "import typer (rich help)": [sys.executable, "-c", "import typer, typer.rich_utils"],
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
    timed(COMMANDS["phasegate --help"])
    results = {}
    for name, argv in COMMANDS.items():
        if args.only_help and name != "phasegate --help":
            continue
        run = paired(BASELINE, argv, args.pairs)
        results[name] = run
        print(f"{name:<24} {run.wall:5.2f} s  import claude_agent_sdk {run.base_wall:5.2f} s  "
              f"ratio {run.ratio:.2f}x  (CPU {run.cpu:.2f} s / {run.base_cpu:.2f} s: "
              f"{run.cpu_ratio:.2f}x)")  # fmt: skip
    help_ = results["phasegate --help"]
    met = min(help_.ratio, help_.cpu_ratio) <= TARGET
    print(f"target for phasegate --help: at most {TARGET}x: {'met' if met else 'MISSED'}")


if __name__ == "__main__":
    main()
