"""Fixtures for runner tests: a tiny project with a bug, its task, and a scripted-run helper."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from phasegate import Agent, Mode, RunEvent, Runner, RunReport, Task, load_task
from phasegate.modes import Isolation
from phasegate.phases.pipeline import Pipeline
from phasegate.agents.retry import RetryPolicy
from phasegate.pipelines.runner import PipelineRunner
from phasegate.testing import Script, ScriptedAgent
from phasegate.testing.pytest_plugin import ScriptedServerFactory
from tests.helpers.pipelines import PipelineRun
from tests.helpers.scenarios import EXAMPLE

FAST_RETRIES = RetryPolicy(session_retries=2, initial_delay=0.01, max_delay=0.05)
"""Real retry logic with backoff short enough for tests."""


@pytest.fixture
def task() -> Task:
    """The fix-vulnerability example task: edit (Edit/MultiEdit, changes) then JSON summary."""
    return load_task(EXAMPLE / "task.yaml")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A fresh copy of the example project (app.py with an eval bug)."""
    work = tmp_path / "project"
    work.mkdir()
    (work / "app.py").write_text((EXAMPLE / "project" / "app.py").read_text())
    return work


@pytest.fixture
def events() -> list[RunEvent]:
    """Collects the events of a run."""
    return []


@pytest.fixture(params=["scripted", pytest.param("claude", marks=pytest.mark.cli)])
def agent_kind(request: pytest.FixtureRequest) -> str:
    """Which agent replays a script: in-process, or the real Claude Code CLI."""
    return str(request.param)


@pytest.fixture
def run_script(
    task: Task,
    project: Path,
    events: list[RunEvent],
    agent_kind: str,
    scripted_model_server: ScriptedServerFactory,
) -> Callable[..., RunReport]:
    """Run the example task with a model replaying ``replies``.

    With ``agent_kind == "claude"`` the real CLI runs against the scripted model server;
    otherwise the in-process scripted agent replays the same script.
    """

    def run(
        replies: list[dict[str, Any]],
        *,
        mode: Mode = "gate",
        max_attempts: int = 3,
        on: Task | None = None,
        retry: RetryPolicy = FAST_RETRIES,
    ) -> RunReport:
        script = Script.model_validate({"replies": replies})
        agent: Agent = ScriptedAgent(script)
        if agent_kind == "claude":
            server = scripted_model_server(script)
            agent = server.claude_agent(timeout=90, request_timeout=20)
        runner = Runner(
            agent, mode=mode, max_attempts=max_attempts, on_event=events.append, retry=retry
        )
        return runner.run_sync(on or task, project)

    return run


@pytest.fixture
def run_pipeline(
    tmp_path: Path, agent_kind: str, scripted_model_server: ScriptedServerFactory
) -> Callable[..., PipelineRun]:
    """Run a pipeline (given as data) with a model replaying ``replies`` in a fresh work dir.

    With ``agent_kind == "claude"`` the real CLI runs against the scripted model server;
    otherwise the in-process scripted agent replays the same script.
    """
    counter = iter(range(1_000))

    def run(
        pipeline: dict[str, Any],
        replies: list[dict[str, Any]],
        *,
        isolation: Isolation = "session",
        files: dict[str, str] | None = None,
        on_event: Callable[[RunEvent], None] | None = None,
    ) -> PipelineRun:
        work = tmp_path / f"work{next(counter)}"
        work.mkdir()
        for name, text in (files or {}).items():
            (work / name).write_text(text)
        script = Script.model_validate({"replies": replies})
        agent: Agent = ScriptedAgent(script, continue_script=isolation == "process")
        server = None
        if agent_kind == "claude":
            server = scripted_model_server(script)
            agent = server.claude_agent(timeout=90, request_timeout=20)
        events: list[RunEvent] = []

        def sink(event: RunEvent) -> None:
            events.append(event)
            if on_event is not None:
                on_event(event)

        runner = PipelineRunner(agent, isolation=isolation, on_event=sink, retry=FAST_RETRIES)
        report = runner.run_sync(Pipeline.model_validate(pipeline), work)
        instructions = server.user_texts() if server is not None else []
        return PipelineRun(report, events, instructions, work)

    return run
