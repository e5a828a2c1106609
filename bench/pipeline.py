"""What a pipeline costs in one session vs. one session per stage, with the real Claude Code CLI.

A 5-stage pipeline (each stage writes ``stageK.md``; its exit checks want the file and at
least 5 lines, and stage 5 also runs a command) runs against phasegate's offline scripted
model server, in a fresh work directory and a fresh server each time:

* ``session``: every stage in ONE Claude Code session, the Stop hook handing over the next
  stage's prompt;
* ``process`` (the baseline): each stage in its own CLI session.

The modes alternate their order from run to run. It prints, per mode, the median wall time
of ``run_sync``, the median sessions started and main API requests, and the ratio
one-session / per-process (target: <= 0.5x; printed, not enforced). It stops with an error
only when a run is not accepted or uses an unexpected number of sessions.

Run with ``make bench`` or ``.venv/bin/python bench/pipeline.py [--runs N | --quick]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from dataclasses import dataclass
from typing import Any, NoReturn

from phasegate.modes import Isolation
from phasegate.phases.pipeline import Pipeline
from phasegate.pipelines.report import PipelineReport
from phasegate.pipelines.runner import PipelineRunner
from phasegate.telemetry.events import RunEvent
from phasegate.agents.scripted.model_server import ScriptedModelServer
from phasegate.agents.scripted.script import Script

STAGES = 5
LINES = 6
MODES: tuple[Isolation, ...] = ("session", "process")
EXPECTED_SESSIONS: dict[Isolation, int] = {"session": 1, "process": STAGES}
TARGET_RATIO = 0.5


def file_name(stage: int) -> str:
    return f"stage{stage}.md"


def build_pipeline() -> Pipeline:
    """Five stages; each writes one file, checked for existence and length."""
    stages: list[dict[str, Any]] = []
    for number in range(1, STAGES + 1):
        name = file_name(number)
        checks: list[dict[str, Any]] = [
            {"file_exists": name},
            {"min_lines": {"path": name, "n": 5}},
        ]
        if number == STAGES:
            probe = f"import pathlib,sys; sys.exit(0 if pathlib.Path('{name}').exists() else 1)"
            checks.append({"command": {"argv": ["python3", "-c", probe], "timeout": 60}})
        stages.append(
            {
                "name": f"write-{number}",
                "prompt": f"Write {name} with at least 5 lines of notes for step {number}.",
                "exit_when": checks,
            }
        )
    return Pipeline.model_validate({"name": "bench-five-files", "stages": stages})


def build_script() -> Script:
    """Per stage: on its prompt, Write the file; on the tool result, say done (and stop).

    The stage prompt is matched by ``contains`` only: in process isolation it is the first
    message of a new session (``start``), in session isolation the Stop hook's reason.
    """
    replies: list[dict[str, Any]] = []
    for number in range(1, STAGES + 1):
        content = "".join(f"- note {line} of stage {number}\n" for line in range(1, LINES + 1))
        replies.append(
            {
                "contains": f"Stage {number} of {STAGES}",
                "text": f"Writing {file_name(number)}.",
                "tools": [{"Write": {"file_path": file_name(number), "content": content}}],
            }
        )
        replies.append({"when": "tool_result", "text": f"Stage {number} done."})
    return Script.model_validate({"replies": replies})


@dataclass(frozen=True)
class Sample:
    """One run of the pipeline in one mode."""

    seconds: float
    sessions: int
    requests: int


def run_once(pipeline: Pipeline, script: Script, mode: Isolation) -> Sample:
    """One run in a fresh work directory, against a fresh server; checked for sanity."""
    events: list[RunEvent] = []
    with (
        tempfile.TemporaryDirectory(prefix=f"phasegate-bench-{mode}-") as work,
        ScriptedModelServer(script) as server,
    ):
        agent = server.claude_agent()
        runner = PipelineRunner(agent, isolation=mode, on_event=events.append, timeout=600)
        started = time.perf_counter()
        report = runner.run_sync(pipeline, work, restart=True)
        elapsed = time.perf_counter() - started
        requests = len(server.main_requests())
        if report.verdict != "accepted" or report.sessions != EXPECTED_SESSIONS[mode]:
            fail(mode, report, events, server)
    return Sample(seconds=elapsed, sessions=report.sessions, requests=requests)


def fail(
    mode: Isolation, report: PipelineReport, events: list[RunEvent], server: ScriptedModelServer
) -> NoReturn:
    """Stop the benchmark with everything needed to see what went wrong."""
    lines = [
        f"{mode}: verdict {report.verdict}, {report.sessions} session(s) "
        f"(expected accepted, {EXPECTED_SESSIONS[mode]})",
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
    parser.add_argument("--runs", type=int, default=3, help="runs per mode (default: 3)")
    parser.add_argument("--quick", action="store_true", help="one run per mode")
    args = parser.parse_args()
    runs: int = 1 if args.quick else args.runs
    if runs < 1:
        parser.error("--runs must be at least 1")

    pipeline, script = build_pipeline(), build_script()
    samples: dict[Isolation, list[Sample]] = {mode: [] for mode in MODES}
    for number in range(runs):
        order = MODES if number % 2 == 0 else MODES[::-1]
        for mode in order:
            samples[mode].append(run_once(pipeline, script, mode))

    medians = {mode: statistics.median(s.seconds for s in samples[mode]) for mode in MODES}
    print(f"{STAGES}-stage pipeline, real Claude Code CLI, scripted model server")
    print(f"{'mode':<8} {'runs':>4} {'median s':>9} {'sessions':>8} {'API requests':>12}")
    for mode in MODES:
        group = samples[mode]
        sessions = statistics.median(s.sessions for s in group)
        requests = statistics.median(s.requests for s in group)
        print(f"{mode:<8} {len(group):>4} {medians[mode]:>9.2f} {sessions:>8g} {requests:>12g}")
    ratio = medians["session"] / medians["process"]
    print(f"one-session / per-process: {ratio:.2f}x (target <= {TARGET_RATIO}x)")


if __name__ == "__main__":
    main()
