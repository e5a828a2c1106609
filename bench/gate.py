"""How much a gate check costs, as ratios against baselines measured in the same process.

1. judge() on a long transcript vs. the baseline of parsing that transcript from stream-json
   (the least any offline judge must do);
2. a warm workspace snapshot (hash cache) vs. a cold one, on a tree of many files;
3. the PreToolUse hook a phase's ``allow_tools`` adds before every tool call (issue 31): the
   real Claude Code CLI against the scripted model server, 40 Read calls of small files (two
   a reply) then the marker and the JSON answer, run in one process with the first phase's
   ``allow_tools`` (the hook asked before every call) and without it (no hook registered),
   alternating the order pair by pair. Printed: each side's median wall time, CPU time of
   this process (where the hook's callback runs) and of the CLI, the hook's cost per call
   (difference of medians / calls), the CLI's own time per call without it (its median /
   calls) and the ratio of the two; then ``tool_refusal`` alone (what the runner computes
   per call) over a 2,000-entry transcript, the phasegate part apart from the round trip;
4. reading the same messages pretty-printed (JSON values one after another) vs. as JSON lines
   (the baseline): a pretty-printed file is read as values at once, never tried line by line
   first (1.03x the baseline at 5,000 turns; 5.5x before, when every line was tried first).

Run with ``make bench`` or ``.venv/bin/python bench/gate.py [--pairs N] [--no-hook]``.
Prints medians and ratios; nothing is asserted. On the 2-core development machine, with
other work running (noisy), two runs (5 and 9 pairs): the CLI took 62 to 64 ms a call
without the hook (2.5 to 2.6 s a run); the hook's cost per call came out at -4.2 and
+3.5 ms (ratio -0.07 and 0.06: within the noise, pairs ranging from -11 to +16 ms), this
process's CPU -0.5 and +0.2 ms a call; ``tool_refusal`` took 1.6 to 1.8 ms a call at 2,000
entries (it reads the whole transcript so far, so it grows with the run).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from phasegate import Runner, Task, load_task
from phasegate.agents.retry import RetryPolicy
from phasegate.agents.scripted.model_server import ScriptedModelServer
from phasegate.agents.scripted.script import Script
from phasegate.evidence.saved_transcript import parse_stream_json, read_transcript_text
from phasegate.evidence.workspace import WorkspaceSnapshot, WorkspaceTimeline
from phasegate.validators.judge import judge
from phasegate.validators.tool_policy import guarded_tools, tool_refusal
from phasegate.workspace.observer import WorkspaceObserver

ROOT = Path(__file__).resolve().parents[1]


def median_seconds(action: Callable[[], object], repeat: int = 7) -> float:
    """Median wall time of ``action`` over ``repeat`` runs."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def stream_json_lines(turns: int) -> list[str]:
    """A synthetic Claude Code transcript: each turn reads, edits and talks."""
    lines = [json.dumps({"type": "system", "subtype": "init", "cwd": "/work/project"})]
    for turn in range(turns):
        call = f"toolu_{turn:06d}"
        lines.append(json.dumps({"type": "assistant", "message": {"content": [
            {"type": "text", "text": f"Step {turn}: editing src/m{turn % 50}.py\n" + "x" * 400},
            {"type": "tool_use", "id": call, "name": "Edit",
             "input": {"file_path": f"/work/project/src/m{turn % 50}.py",
                       "old_string": "a", "new_string": "b"}},
        ]}}))  # fmt: skip
        lines.append(json.dumps({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": call, "content": "updated " + "y" * 400},
        ]}}))  # fmt: skip
    summary = {"files_changed": ["src/m1.py"], "description": "Edited the modules as asked."}
    done = "PHASE 1 COMPLETE: Files have been edited\n```json\n" + json.dumps(summary) + "\n```"
    lines.append(
        json.dumps({"type": "assistant", "message": {"content": [{"type": "text", "text": done}]}})
    )
    return lines


def bench_judge(turns: int) -> None:
    task = load_task(ROOT / "examples/fix-vulnerability/task.yaml")
    lines = stream_json_lines(turns)
    transcript = parse_stream_json(lines).transcript
    timeline = WorkspaceTimeline.of(
        [(0, WorkspaceSnapshot()), (len(transcript), WorkspaceSnapshot({"src/m1.py": "h"}))]
    )
    parse = median_seconds(lambda: parse_stream_json(lines))
    check = median_seconds(lambda: judge(task, transcript, timeline, workdir="/work/project"))
    print(f"judge, {len(transcript):>6} entries: parse baseline {parse * 1000:8.1f} ms, "
          f"judge {check * 1000:8.1f} ms, ratio {check / parse:5.2f}x")  # fmt: skip


def bench_pretty(turns: int) -> None:
    lines = stream_json_lines(turns)
    compact = "\n".join(lines)
    pretty = "\n".join(json.dumps(json.loads(line), indent=2) for line in lines)
    base = median_seconds(lambda: read_transcript_text(compact), repeat=5)
    spread = median_seconds(lambda: read_transcript_text(pretty), repeat=5)
    print(f"pretty-printed, {turns:>5} turns: JSON lines {base * 1000:8.1f} ms, "
          f"pretty {spread * 1000:8.1f} ms, ratio {spread / base:5.2f}x")  # fmt: skip


def bench_snapshot(files: int) -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        for number in range(files):
            folder = root / f"pkg{number % 40}"
            folder.mkdir(exist_ok=True)
            (folder / f"m{number}.py").write_bytes(os.urandom(2048))
        old = time.time() - 60  # older than the racy window, so the cache may keep them
        for path in root.rglob("*.py"):
            os.utime(path, (old, old))
        cold = median_seconds(lambda: WorkspaceObserver(root).snapshot(), repeat=3)
        observer = WorkspaceObserver(root)
        observer.snapshot()
        warm = median_seconds(observer.snapshot)
        print(f"snapshot, {files:>6} files: cold {cold * 1000:8.1f} ms, "
              f"warm {warm * 1000:8.1f} ms, ratio {warm / cold:5.2f}x")  # fmt: skip


CALLS = 40
"""Tool calls in the hook scenario: Read of a small file each."""
PER_REPLY = 2
"""Calls in each of the model's replies."""
POLICY_TASK: dict[str, Any] = {
    "name": "read-many",
    "completion": "marker",  # no completion tools: without allow_tools, no hook at all
    "phases": [
        {"name": "investigate", "instructions": "Read every file under notes/.",
         "require_tools": ["Read"], "allow_tools": ["Read", "Grep", "Glob"]},
        {"name": "summary", "instructions": "Report.", "output_schema": {"type": "object"}},
    ],
}  # fmt: skip


def many_reads() -> Script:
    """CALLS reads, PER_REPLY a reply, then the marker and the JSON answer."""
    reads = [{"Read": {"file_path": f"notes/n{number:02d}.txt"}} for number in range(CALLS)]
    replies: list[dict[str, Any]] = [
        {"when": None if start == 0 else "tool_result", "tools": reads[start : start + PER_REPLY]}
        for start in range(0, CALLS, PER_REPLY)
    ]
    answer = '```json\n{"notes": ' + str(CALLS) + "}\n```"
    replies.append(
        {"when": "tool_result", "text": f"PHASE 1 COMPLETE: Investigation done\n\n{answer}"}
    )
    return Script.model_validate({"replies": replies})


@dataclass
class HookSide:
    """One side of the hook comparison: wall time, this process's CPU and the CLI's CPU."""

    label: str
    task: Task
    seconds: list[float] = field(default_factory=list)
    own_cpu: list[float] = field(default_factory=list)
    cli_cpu: list[float] = field(default_factory=list)

    def median(self, values: list[float] | None = None) -> float:
        return statistics.median(self.seconds if values is None else values)


def cpu_seconds(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def hook_run(side: HookSide, script: Script, scratch: Path, number: int) -> None:
    """One run of ``side.task`` through the real CLI, in a fresh project, fresh server."""
    work = Path(tempfile.mkdtemp(prefix=f"hook-{number}-", dir=scratch))
    (work / "notes").mkdir()
    for name in range(CALLS):
        (work / "notes" / f"n{name:02d}.txt").write_text(f"note {name}\n" * 5, encoding="utf-8")
    with ScriptedModelServer(script) as server:
        agent = server.claude_agent(timeout=120, request_timeout=30)
        runner = Runner(agent, retry=RetryPolicy(session_retries=0))
        started = time.perf_counter()
        own, cli = cpu_seconds(resource.RUSAGE_SELF), cpu_seconds(resource.RUSAGE_CHILDREN)
        report = runner.run_sync(side.task, work)
        side.seconds.append(time.perf_counter() - started)
        side.own_cpu.append(cpu_seconds(resource.RUSAGE_SELF) - own)
        side.cli_cpu.append(cpu_seconds(resource.RUSAGE_CHILDREN) - cli)
        unmatched = server.unmatched
    reads = report.phases[0].tools.get("Read", 0) if report.phases else 0
    if report.verdict != "accepted" or reads != CALLS or unmatched:
        sys.exit(f"bench/gate.py: {side.label}: {report.verdict}, {reads} reads, "
                 f"unmatched {unmatched}, {report.error}")  # fmt: skip


def bench_hook(pairs: int) -> None:
    """The PreToolUse hook's cost per tool call, against the CLI's own time per call."""
    hooked = HookSide("allow_tools (hook)", Task.model_validate(POLICY_TASK))
    phases = [
        {key: value for key, value in phase.items() if key != "allow_tools"}
        for phase in POLICY_TASK["phases"]
    ]
    plain = HookSide("no policy (no hook)", Task.model_validate({**POLICY_TASK, "phases": phases}))
    if guarded_tools(plain.task) != () or guarded_tools(hooked.task) is not None:
        sys.exit("bench/gate.py: the two tasks no longer differ by the hook alone")
    script = many_reads()
    with tempfile.TemporaryDirectory(prefix="phasegate-bench-hook-") as folder:
        scratch = Path(folder)
        for side in (hooked, plain):  # warm-up of each, not counted
            hook_run(side, script, scratch, 0)
            side.seconds.clear()
            side.own_cpu.clear()
            side.cli_cpu.clear()
        for number in range(1, pairs + 1):
            order = (hooked, plain) if number % 2 else (plain, hooked)
            for side in order:
                hook_run(side, script, scratch, number)
    print(f"PreToolUse hook, {CALLS} Read calls ({PER_REPLY} a reply), {pairs} pairs:")
    for side in (hooked, plain):
        print(f"  {side.label:<20} median {side.median():.3f} s   CPU here "
              f"{side.median(side.own_cpu):.3f} s   CPU of the CLI "
              f"{side.median(side.cli_cpu):.3f} s")  # fmt: skip
    per_call = (hooked.median() - plain.median()) / CALLS
    cli_per_call = plain.median() / CALLS
    own_per_call = (hooked.median(hooked.own_cpu) - plain.median(plain.own_cpu)) / CALLS
    pair_ms = " ".join(
        f"{(h - p) / CALLS * 1000:.1f}" for h, p in zip(hooked.seconds, plain.seconds, strict=True)
    )
    print(f"  hook per call {per_call * 1000:.1f} ms (pair by pair: {pair_ms}); CLI per call "
          f"without it {cli_per_call * 1000:.1f} ms; ratio {per_call / cli_per_call:.3f}; "
          f"CPU here per call {own_per_call * 1000:.2f} ms")  # fmt: skip


def bench_tool_refusal(entries: int) -> None:
    """tool_refusal (what TaskRun.before_tool computes per call) over a long transcript."""
    task = Task.model_validate(POLICY_TASK)
    transcript = parse_stream_json(stream_json_lines(entries // 3)).transcript.entries
    per_call = median_seconds(lambda: tool_refusal(task, transcript, "Read"), repeat=21)
    print(f"tool_refusal, {len(transcript):>6} entries: {per_call * 1000:8.3f} ms a call")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5, help="hook pairs (default 5)")
    parser.add_argument("--no-hook", action="store_true", help="skip the CLI runs")
    arguments = parser.parse_args()
    for turns in (100, 1000, 5000):
        bench_judge(turns)
    bench_pretty(5000)
    for files in (1000, 10000):
        bench_snapshot(files)
    bench_tool_refusal(2000)
    if not arguments.no_hook:
        bench_hook(arguments.pairs)


if __name__ == "__main__":
    main()
