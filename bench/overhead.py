"""The cost of the gate: phasegate against a bare ``claude_agent_sdk.query()``, same model.

The scenario is the good run of examples/fix-vulnerability: a scripted model (phasegate's
offline model server, a fresh one per run) reads app.py, edits it, says the phase marker and
the JSON summary, and is accepted at the first gate check; the real Claude Code CLI runs the
tools. Each run gets a fresh copy of the project. Compared, in alternating pairs (the order
flipped every pair):

1. in one warm process: ``Runner.run`` against a bare ``query()`` loop with the same prompt
   (bench/bare_query.py's ``run``), then again with the task's completion set to
   ``marker``, which offers no completion tools and so starts no MCP server in the CLI;
2. as whole processes: ``python -m phasegate run TASK --workdir W`` against ``python
   bench/bare_query.py PROMPT W``, both pointed at the model server by their environment;
3. for information: the CLI alone, ``claude -p PROMPT``.

It prints the median of each side, the ratio of medians with the ratios pair by pair, the
CPU time each side used (steadier than wall time on a busy machine), the model requests
each side made (the same work on both sides means the same count), and the characters each
side sent the model in those same runs (tool definitions, system prompt and messages, counted
as bench/tokens.py counts them).
Targets, printed and not enforced: 1.03x in one process, 1.05x as whole processes.
``--profile`` adds a breakdown of one ``phasegate run`` (bench/overhead_profile.py). Run with
``make bench`` or ``.venv/bin/python bench/overhead.py [--pairs N] [--profile]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

from bare_query import run as bare_run
from tokens import Sent

from phasegate import Runner, load_task
from phasegate.agents.claude.cli import bundled_claude_cli
from phasegate.agents.scripted.model_server import ScriptedModelServer
from phasegate.agents.scripted.script import Script

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parent / "examples" / "fix-vulnerability"
TARGETS = {
    "in one process": 1.03,
    "in one process, marker completion": 1.03,
    "whole processes": 1.05,
}
BUGGY = "    return eval(expression)  # runs any Python the user sends, not just arithmetic\n"
FIXED = "    return float(expression)  # only numbers\n"
SUMMARY = '{"files_changed": ["app.py"], "description": "Replaced eval with float parsing."}'
GOOD_MODEL = Script.model_validate({"replies": [
    {"tools": [{"Read": {"file_path": "app.py"}}]},
    {"tools": [{"Edit": {"file_path": "app.py", "old_string": BUGGY, "new_string": FIXED}}]},
    {"text": f"PHASE 1 COMPLETE: Files have been edited\n\n```json\n{SUMMARY}\n```"},
]})  # fmt: skip
"""Read, edit, marker and JSON: accepted at the first check."""


def fail(message: str) -> NoReturn:
    sys.exit(f"bench/overhead.py: {message}")


@dataclass
class Side:
    """One way of running the scenario: its times and the model requests of each run."""

    label: str
    seconds: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    """CPU seconds (user and system) of each run: this process, the CLI, any child."""
    requests: list[int] = field(default_factory=list)
    sent: list[int] = field(default_factory=list)
    """Characters each run sent the model: tool definitions, system prompt and messages of
    every request of the conversation (bench/tokens.py counts them the same way)."""

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


def _cpu_seconds() -> float:
    """CPU time of this process and its waited-for children: the work done, which a busy
    machine's scheduling does not inflate the way it inflates wall time."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


Runs = Callable[[ScriptedModelServer, Path], None]


def timed(side: Side, runs: Runs, scratch: Path, number: int) -> None:
    """One run of ``runs`` in a fresh copy of the project against a fresh model server."""
    folder = tempfile.mkdtemp(prefix=f"{side.label.replace(' ', '-')}-{number}-", dir=scratch)
    work = Path(folder) / "project"
    shutil.copytree(EXAMPLE / "project", work)
    with ScriptedModelServer(GOOD_MODEL) as server:
        started, cpu = time.perf_counter(), _cpu_seconds()
        runs(server, work)
        side.seconds.append(time.perf_counter() - started)
        side.cpu.append(_cpu_seconds() - cpu)
        side.requests.append(len(server.requests))
        side.sent.append(sum(Sent.of(request).total for request in server.main_requests()))
    if FIXED not in (work / "app.py").read_text():
        fail(f"{side.label}: the model's edit is not on disk")


def runner_in_process(completion: str | None = None) -> Runs:
    """``Runner.run`` of the example task (with ``completion`` instead of its own)."""
    task = load_task(EXAMPLE / "task.yaml")
    if completion is not None:
        task = task.model_copy(update={"completion": completion})

    def runs(server: ScriptedModelServer, work: Path) -> None:
        report = asyncio.run(Runner(server.claude_agent()).run(task, work))
        if report.verdict != "accepted":
            fail(f"Runner.run ended {report.verdict}: {report.error}")

    return runs


def bare_in_process(prompt: str) -> Runs:
    def runs(server: ScriptedModelServer, work: Path) -> None:
        asyncio.run(bare_run(prompt, str(work), env=server.env()))

    return runs


def whole_process(command: Callable[[Path], list[str]]) -> Runs:
    def runs(server: ScriptedModelServer, work: Path) -> None:
        done = subprocess.run(command(work), env={**os.environ, **server.env()}, cwd=work,
                              capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
        if done.returncode != 0:
            fail(f"{command(work)[:4]} exited {done.returncode}: {done.stderr[-1000:]}")

    return runs


def compare(title: str, sides: tuple[tuple[Side, Runs], tuple[Side, Runs]], pairs: int,
            scratch: Path) -> None:  # fmt: skip
    (gated, gated_runs), (bare, bare_runs) = sides
    timed(gated, gated_runs, scratch, 0)  # warm-up of each, not counted
    timed(bare, bare_runs, scratch, 0)
    for side in (gated, bare):
        side.seconds.clear()
        side.cpu.clear()
        side.requests.clear()
        side.sent.clear()
    for number in range(1, pairs + 1):
        order = ((gated, gated_runs), (bare, bare_runs))
        for side, runs in order if number % 2 else order[::-1]:
            timed(side, runs, scratch, number)
    ratio = gated.median / bare.median
    target = TARGETS[title]
    print(f"{title}:")
    for side in (gated, bare):
        print(f"  {side.label:<28} median {side.median:.3f} s   CPU "
              f"{statistics.median(side.cpu):.3f} s   model requests "
              f"{sorted(set(side.requests))}")  # fmt: skip
    pair_ratios = " ".join(f"{g / b:.2f}" for g, b in zip(gated.seconds, bare.seconds, strict=True))
    verdict = "meets" if ratio <= target else "misses"
    cpu_ratio = statistics.median(gated.cpu) / statistics.median(bare.cpu)
    print(f"  ratio of medians {ratio:.3f}x ({verdict} the target {target:.2f}x); "
          f"pair by pair: {pair_ratios}; CPU {cpu_ratio:.3f}x")  # fmt: skip
    sent = statistics.median(gated.sent) / statistics.median(bare.sent)
    print(f"  input sent per run, in the same runs: {statistics.median(gated.sent):,.0f} "
          f"against {statistics.median(bare.sent):,.0f} characters: {sent:.3f}x")  # fmt: skip


def claude_alone(prompt: str, scratch: Path, pairs: int) -> None:
    cli = bundled_claude_cli()
    if cli is None:
        print("the CLI alone: no bundled CLI found")
        return
    side = Side("claude -p")
    command = [str(cli), "-p", prompt, "--permission-mode", "acceptEdits"]
    for number in range(pairs):
        timed(side, whole_process(lambda _work: command), scratch, number)
    print(f"for information, the CLI alone (claude -p): median {side.median:.3f} s, model "
          f"requests {sorted(set(side.requests))}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=7, help="alternating pairs (default 7)")
    parser.add_argument("--profile", action="store_true", help="add a breakdown of one run")
    arguments = parser.parse_args()
    task = EXAMPLE / "task.yaml"
    prompt = Runner(object()).prompt_for(load_task(task))  # type: ignore[arg-type]
    with tempfile.TemporaryDirectory(prefix="phasegate-bench-overhead-") as folder:
        scratch = Path(folder)
        prompt_file = scratch / "prompt.txt"
        prompt_file.write_text(prompt, encoding="utf-8")
        python = [sys.executable, "-X", "frozen_modules=on"]
        compare("in one process", ((Side("Runner.run"), runner_in_process()),
                                   (Side("bare query() loop"), bare_in_process(prompt))),
                arguments.pairs, scratch)  # fmt: skip
        # Without the completion tools' MCP server, whose handshake the CLI makes at start.
        compare("in one process, marker completion", (
            (Side("Runner.run, markers only"), runner_in_process("marker")),
            (Side("bare query() loop"), bare_in_process(prompt)),
        ), arguments.pairs, scratch)  # fmt: skip
        gated_command = [*python, "-m", "phasegate", "run", str(task), "--workdir"]
        bare_command = [*python, str(HERE / "bare_query.py"), str(prompt_file)]
        compare("whole processes", (
            (Side("phasegate run"), whole_process(lambda work: [*gated_command, str(work), "-q"])),
            (Side("bare query() script"), whole_process(lambda work: [*bare_command, str(work)])),
        ), arguments.pairs, scratch)  # fmt: skip
        claude_alone(prompt, scratch, 3)
    if arguments.profile:
        subprocess.run([sys.executable, str(HERE / "overhead_profile.py")], check=True)


if __name__ == "__main__":
    main()
