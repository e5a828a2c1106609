"""Where one ``phasegate run`` spends its time: a breakdown, each part as a share of the whole.

It runs in a fresh process, as ``phasegate run`` does: the imports (the agent's SDK, then
what phasegate adds), loading the task (its schemas compiled), then one run of the good
scenario (bench/overhead.py's model) with timers around workspace snapshots, the gate's
checks, the Stop and PostToolUseFailure hooks (time spent answering them), report assembly,
and the session's start (from starting the query to the CLI's first message: the CLI's start, the
completion tools' in-process MCP server, the hooks' registration). What is left is the agent
itself: the CLI and the model. Run by ``bench/overhead.py --profile``, or alone.
"""

from __future__ import annotations

import asyncio
import functools
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

_CLOCK: dict[str, float] = defaultdict(float)
_STARTED = time.perf_counter()


def _timed(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """``function``, its time added to ``name`` (a coroutine's time until it returns)."""
    if asyncio.iscoroutinefunction(function):

        @functools.wraps(function)
        async def waited(*args: Any, **kwargs: Any) -> Any:
            begun = time.perf_counter()
            try:
                return await function(*args, **kwargs)
            finally:
                _CLOCK[name] += time.perf_counter() - begun

        return waited

    @functools.wraps(function)
    def plain(*args: Any, **kwargs: Any) -> Any:
        begun = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            _CLOCK[name] += time.perf_counter() - begun

    return plain


def main() -> None:
    begun = time.perf_counter()
    import claude_agent_sdk  # noqa: F401

    _CLOCK["import: the agent's SDK"] = time.perf_counter() - begun
    begun = time.perf_counter()
    from phasegate import Runner, load_task
    from phasegate._cli import app, task_commands  # noqa: F401
    from phasegate.agents.claude import session as claude_session
    from phasegate.tasks import gate, session
    from phasegate.workspace import observer
    from phasegate.agents.scripted.model_server import ScriptedModelServer

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from overhead import EXAMPLE, GOOD_MODEL

    _CLOCK["import: phasegate"] = time.perf_counter() - begun

    begun = time.perf_counter()
    task = load_task(EXAMPLE / "task.yaml")
    _CLOCK["task loading, schemas compiled"] = time.perf_counter() - begun

    observer.WorkspaceObserver.snapshot = _timed(  # type: ignore[method-assign]
        "workspace snapshots", observer.WorkspaceObserver.snapshot)  # fmt: skip
    gate.PhaseGate.check = _timed("gate checks", gate.PhaseGate.check)  # type: ignore[method-assign]
    gate.PhaseGate.judge = _timed("gate checks", gate.PhaseGate.judge)  # type: ignore[method-assign]
    session.assemble_report = _timed(  # type: ignore[attr-defined]
        "report assembly", session.assemble_report)  # type: ignore[attr-defined]  # fmt: skip
    claude = claude_session.ClaudeSession
    claude._on_stop = _timed("Stop hook answers (the gate inside)", claude._on_stop)  # type: ignore[method-assign]
    claude._on_tool_failure = _timed(  # type: ignore[method-assign]
        "PostToolUseFailure hook answers", claude._on_tool_failure)  # fmt: skip
    record, run = claude._record, claude.run

    def first_record(self: Any, entry: Any) -> None:
        if not getattr(self, "_seen", False):
            self._seen = True
            _CLOCK["session start (CLI, MCP server, hooks)"] = time.perf_counter() - self._begun
        record(self, entry)

    async def timed_run(self: Any) -> None:
        self._begun = time.perf_counter()
        await run(self)

    claude._record = first_record  # type: ignore[method-assign]
    claude.run = timed_run  # type: ignore[method-assign]

    with tempfile.TemporaryDirectory() as folder, ScriptedModelServer(GOOD_MODEL) as server:
        work = Path(folder) / "project"
        shutil.copytree(EXAMPLE / "project", work)
        begun = time.perf_counter()
        report = asyncio.run(Runner(server.claude_agent()).run(task, work))
        run_seconds = time.perf_counter() - begun
    if report.verdict != "accepted":
        sys.exit(f"bench/overhead_profile.py: the run ended {report.verdict}")
    bare_start = asyncio.run(
        _bare_session_start(GOOD_MODEL, Runner(server.claude_agent()).prompt_for(task))
    )
    whole = time.perf_counter() - _STARTED
    bare_start = asyncio.run(_bare_session_start(GOOD_MODEL, Runner(object()).prompt_for(task)))  # type: ignore[arg-type]
    gate_in_hook = _CLOCK["gate checks"] if _CLOCK["Stop hook answers (the gate inside)"] else 0.0
    parts = [k for k in _CLOCK if not k.startswith(("import", "task"))]
    agent = run_seconds - sum(_CLOCK[k] for k in parts) + gate_in_hook
    top = {
        **{k: v for k, v in _CLOCK.items() if k.startswith(("import", "task"))},
        "the run": run_seconds,
        "the model server, the project's copy, the event loop": whole - run_seconds - sum(
            v for k, v in _CLOCK.items() if k.startswith(("import", "task"))),
    }  # fmt: skip
    print(f"breakdown of one phasegate run ({whole:.3f} s from the process start):")
    for name, seconds in top.items():
        print(f"  {name:<54} {seconds * 1000:8.1f} ms  {seconds / whole:6.1%}")
        if name == "the run":
            inner = {**{k: _CLOCK[k] for k in parts}, "the agent itself (CLI and model)": agent}
            for part, spent in sorted(inner.items(), key=lambda item: -item[1]):
                print(f"    {part:<52} {spent * 1000:8.1f} ms  {spent / whole:6.1%}")
    print(
        f"  (a bare query()'s session start, for comparison: {bare_start * 1000:.1f} ms;"
        " the gate's checks are counted inside the Stop hook's answers)"
    )


async def _bare_session_start(model: Any, prompt: str) -> float:
    """Seconds from a bare ``query()``'s start to the CLI's first message."""
    from claude_agent_sdk import ClaudeAgentOptions, query

    from phasegate.agents.scripted.model_server import ScriptedModelServer

    with tempfile.TemporaryDirectory() as folder, ScriptedModelServer(model) as server:
        options = ClaudeAgentOptions(cwd=folder, permission_mode="acceptEdits",
                                     setting_sources=[], env=server.env())  # fmt: skip
        begun = time.perf_counter()
        first = None
        async for _ in query(prompt=prompt, options=options):
            first = first or time.perf_counter() - begun
        return first or 0.0


if __name__ == "__main__":
    main()
