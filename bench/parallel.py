"""What branches save: a plan, three independent stages and a join, in parallel vs. one at a time.

The pipeline (``plan`` → ``backend``, ``frontend``, ``docs`` → ``integrate``) runs with the
real Claude Code CLI against phasegate's offline scripted model server, whose every reply
takes a fixed ``delay`` (a model that takes time to answer), in a fresh work directory and a
fresh server each time:

* ``parallel``: ``max_parallel: 3``, the three middle stages at once, each in a session
  forked from the plan's, in its own work directory; the join merges them;
* ``sequential`` (the baseline): the same pipeline with ``max_parallel: 1``, so the same
  sessions, forks and merges run one stage at a time.

Each stage takes three replies (write its file, read it back, say it is done), so the model's
time is 3 stage times against 5: the ratio cannot go below 0.6 and the target is at most
0.65. What stays above 0.6 is what the model's time does not cover: each session's CLI
start-up, which three sessions starting at once pay together on a small machine (on 2 busy
cores, about 1.9 s for the three against 0.5 s for one). The modes
alternate their order from run to run; it prints each mode's median wall time and the ratio
parallel / sequential, on a last line ending with the ratio (``0.62x``). It stops with an
error only when a run is not accepted.

Run with ``make bench`` or ``.venv/bin/python bench/parallel.py [--runs N | --quick]
[--delay S]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from typing import Any, NoReturn

from phasegate.agents.scripted.model_server import ScriptedModelServer
from phasegate.agents.scripted.script import Script
from phasegate.phases.pipeline import Pipeline
from phasegate.pipelines.report import PipelineReport
from phasegate.pipelines.runner import PipelineRunner
from phasegate.telemetry.events import RunEvent

MIDDLE = ("backend", "frontend", "docs")
MODES = {"parallel": 3, "sequential": 1}
TARGET_RATIO = 0.65
LIMIT_RATIO = 0.6


def build_pipeline() -> Pipeline:
    """plan, three stages that need only the plan, and a join that needs all three."""
    stages: list[dict[str, Any]] = [_stage("plan")]
    stages += [_stage(name, needs=["plan"]) for name in MIDDLE]
    stages.append(
        {
            "name": "integrate",
            "needs": list(MIDDLE),
            "prompt": "Check that every part is there, then write integrate.md.",
            "exit_when": [{"file_exists": f"{name}.md"} for name in (*MIDDLE, "integrate")],
        }
    )
    return Pipeline.model_validate({"name": "bench-fan-out", "stages": stages})


def _stage(name: str, *, needs: list[str] | None = None) -> dict[str, Any]:
    stage: dict[str, Any] = {
        "name": name,
        "prompt": f"Write {name}.md with notes on the {name}.",
        "exit_when": [{"file_exists": f"{name}.md"}, {"min_lines": {"path": f"{name}.md", "n": 3}}],
    }
    if needs is not None:
        stage["needs"] = needs
    return stage


def build_script(delay: float) -> Script:
    """Per stage, in its branch's conversation: Write the file, Read it back, say it is done;
    every reply after ``delay`` seconds. The join continues the first middle stage's branch."""
    replies: list[dict[str, Any]] = []
    for name, branch in [("plan", None), *((n, n) for n in MIDDLE), ("integrate", MIDDLE[0])]:
        key = {"branch": branch} if branch is not None else {}
        content = "".join(f"- note {line} on the {name}\n" for line in range(1, 5))
        write = {"Write": {"file_path": f"{name}.md", "content": content}}
        read = {"Read": {"file_path": f"{name}.md"}}
        replies.append({**key, "delay": delay, "tools": [write]})
        replies.append({**key, "delay": delay, "tools": [read]})
        replies.append({**key, "delay": delay, "text": f"{name}.md is written."})
    return Script.model_validate({"replies": replies})


def run_once(pipeline: Pipeline, script: Script, bound: int) -> float:
    """One run in a fresh work directory, against a fresh server; its wall time."""
    events: list[RunEvent] = []
    with (
        tempfile.TemporaryDirectory(prefix="phasegate-bench-parallel-") as work,
        ScriptedModelServer(script) as server,
    ):
        agent = server.claude_agent()
        runner = PipelineRunner(agent, on_event=events.append, timeout=600, max_parallel=bound)
        started = time.perf_counter()
        report = runner.run_sync(pipeline, work, restart=True)
        elapsed = time.perf_counter() - started
        if report.verdict != "accepted":
            fail(bound, report, events, server)
    return elapsed


def fail(
    bound: int, report: PipelineReport, events: list[RunEvent], server: ScriptedModelServer
) -> NoReturn:
    """Stop the benchmark with everything needed to see what went wrong."""
    lines = [
        f"max_parallel {bound}: verdict {report.verdict}: {report.error}",
        "report:",
        report.model_dump_json(indent=2),
        "events:",
        *(json.dumps(event.as_dict(), default=str) for event in events),
        "main requests (last input, reply used):",
        *(
            f"  {r.last} {r.last_text[:60]!r} -> {r.reply.text if r.reply else None!r}"
            for r in server.main_requests()
        ),
    ]
    raise SystemExit("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=2, help="runs per mode (default: 2)")
    parser.add_argument("--quick", action="store_true", help="one run per mode")
    parser.add_argument(
        "--delay", type=float, default=3.0, help="seconds per model reply (default: 3)"
    )
    args = parser.parse_args()
    runs: int = 1 if args.quick else args.runs
    if runs < 1:
        parser.error("--runs must be at least 1")

    pipeline, script = build_pipeline(), build_script(args.delay)
    samples: dict[str, list[float]] = {mode: [] for mode in MODES}
    names = tuple(MODES)
    for number in range(runs):
        for mode in names if number % 2 == 0 else names[::-1]:
            samples[mode].append(run_once(pipeline, script, MODES[mode]))

    medians = {mode: statistics.median(samples[mode]) for mode in MODES}
    print(
        f"plan, {len(MIDDLE)} independent stages, a join; real Claude Code CLI, scripted model "
        f"server answering after {args.delay:g} s"
    )
    print(f"{'mode':<11} {'max_parallel':>12} {'runs':>4} {'median s':>9}")
    for mode, bound in MODES.items():
        print(f"{mode:<11} {bound:>12} {len(samples[mode]):>4} {medians[mode]:>9.2f}")
    ratio = medians["parallel"] / medians["sequential"]
    print(f"parallel / sequential (target <= {TARGET_RATIO}, limit {LIMIT_RATIO}): {ratio:.2f}x")


if __name__ == "__main__":
    main()
