"""``phasegate demo``: the point of the project in one screen, offline and without a key.

The bundled example (``examples/fix-vulnerability``) is a tiny project with a code-injection
bug and a task: edit the file, then report JSON. Its scripted "lazy model" claims the fix
and prints the JSON without editing anything, the failure phasegate exists to catch. The
demo runs that same model twice, in fresh copies of the project: once judged a single time
at the end (``single-query``), once behind the gate (``gate``), and tells what was claimed,
what really happened, and the verdict.

By default the real Claude Code CLI does the work, talking to phasegate's scripted model
server on 127.0.0.1 (no key, no network); ``agent="scripted"`` uses the in-process agent.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from phasegate.errors import UsageError
from phasegate.modes import Mode
from phasegate.phases.loading import load_task
from phasegate.phases.model import Task
from phasegate.tasks.report import RunReport
from phasegate.tasks.runner import Runner
from phasegate.telemetry.events import EventSink
from phasegate.agents.scripted.script import load_script
from phasegate.agents.scripted.agent import ScriptedAgent

EXAMPLE = "fix-vulnerability"


def example_dir(name: str = EXAMPLE) -> Path:
    """Where a bundled example lives: inside an installed wheel, or in a source checkout."""
    bundled = resources.files("phasegate").joinpath("_examples", name)
    if bundled.is_dir():
        return Path(str(bundled))
    # An editable install: the examples sit at the root of the checkout, above src/.
    for folder in Path(__file__).resolve().parents:
        if (folder / "examples" / name).is_dir():
            return folder / "examples" / name
    raise UsageError(f"the bundled example {name!r} is missing; reinstall phasegate")


def run_demo(
    echo: Callable[[str], object], progress: EventSink | None = None, agent: str = "claude"
) -> int:
    """Run the demo, writing the account with ``echo``; 0 when both verdicts are as expected."""
    example = example_dir()
    task = load_task(example / "task.yaml")
    echo(f"phasegate demo: {task.description}")
    runtime = "the real Claude Code CLI" if agent == "claude" else "the in-process agent"
    echo(f"Agent: {runtime}; model: a scripted model (offline, deterministic).")
    echo("The same scripted model runs twice. It reads app.py, prints")
    echo("'PHASE 1 COMPLETE: Files have been edited' and a JSON summary, and edits nothing")
    echo("unless somebody pushes back.\n")
    single = _run(example, task, "single-query", progress, agent)
    _account(echo, "1) single-query: one prompt, judged once at the end", single, task)
    gated = _run(example, task, "gate", progress, agent)
    title = "2) gate: judged each time the model stops, with structured feedback"
    _account(echo, title, gated, task)
    as_expected = single.verdict == "rejected" and gated.verdict == "accepted"
    echo("A marker is a claim, not evidence: the gate accepted the JSON only once the edit")
    echo("was really on disk.")
    return 0 if as_expected else 1


def _run(
    example: Path, task: Task, mode: Mode, progress: EventSink | None, agent: str
) -> RunReport:
    script = load_script(example / "model.yaml")
    with tempfile.TemporaryDirectory(prefix=f"phasegate-demo-{mode}-") as work:
        shutil.copytree(example / "project", work, dirs_exist_ok=True)
        if agent == "scripted":
            return Runner(ScriptedAgent(script), mode=mode, on_event=progress).run_sync(task, work)
        from phasegate.agents.scripted.model_server import ScriptedModelServer

        with ScriptedModelServer(script) as server:
            return Runner(server.claude_agent(), mode=mode, on_event=progress).run_sync(task, work)


def _account(echo: Callable[[str], object], title: str, report: RunReport, task: Task) -> None:
    echo(title)
    for phase in report.phases:
        if task.phases[phase.index - 1].is_output:
            claim = f"JSON says changed: {', '.join(report.files_claimed) or 'nothing'}"
            echo(f"   phase {phase.index} {phase.name:<8} {claim}")
            continue
        claimed = "marker printed" if phase.marker_seen else "no marker"
        tools = ", ".join(f"{n}×{c}" for n, c in sorted(phase.tools.items())) or "no tool calls"
        echo(f"   phase {phase.index} {phase.name:<8} claimed: {claimed:<15} tools: {tools}")
    echo(f"   disk really changed: {', '.join(report.files_changed) or 'nothing'}")
    codes = sorted({issue.code.value for issue in report.issues})
    detail = f" ({', '.join(codes)})" if codes else ""
    echo(f"   verdict: {report.verdict.upper()} after {report.attempts} gate check(s){detail}\n")
