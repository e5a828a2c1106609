"""Ending a run early through its ``stop`` event: judged like a timeout, never lost."""

from __future__ import annotations

import asyncio
from pathlib import Path

from phasegate import AgentError, AgentObserver, AgentRequest, PipelineRunner, Runner, Task
from phasegate.phases.pipeline import Pipeline
from phasegate.agents.session import STOPPED


class _WritesThenWaits:
    """An agent that edits app.py, then works on until it is cancelled."""

    name = "waiting"

    def __init__(self) -> None:
        self.working = asyncio.Event()

    async def run(self, request: AgentRequest, observer: AgentObserver) -> None:
        (request.workdir / "app.py").write_text("rewritten\n")
        self.working.set()
        await asyncio.Event().wait()


async def _run_and_stop(task: Task, project: Path) -> tuple[str | None, str, str]:
    agent, stop = _WritesThenWaits(), asyncio.Event()
    run = asyncio.create_task(Runner(agent).run(task, project, run_id="abc123", stop=stop))
    await agent.working.wait()
    stop.set()
    report = await run
    return report.error, report.verdict, report.run_id


def test_a_stopped_run_ends_with_its_report_and_says_it_was_stopped(
    fix_task: Task, project: Path
) -> None:
    error, verdict, run_id = asyncio.run(_run_and_stop(fix_task, project))
    assert error == STOPPED
    assert verdict == "error"
    assert run_id == "abc123"
    assert (project / "app.py").read_text() == "rewritten\n"


def test_a_stopped_run_of_a_reverting_task_restores_the_work_directory(
    fix_task: Task, project: Path
) -> None:
    before = (project / "app.py").read_text()
    reverting = fix_task.model_copy(update={"on_reject": "revert"})
    error, _, _ = asyncio.run(_run_and_stop(reverting, project))
    assert error == STOPPED
    assert (project / "app.py").read_text() == before


def test_a_stop_set_before_the_run_starts_ends_it_at_once(fix_task: Task, project: Path) -> None:
    stop = asyncio.Event()
    stop.set()
    report = asyncio.run(Runner(_WritesThenWaits()).run(fix_task, project, stop=stop))
    assert report.error == STOPPED


def test_a_pipeline_run_can_be_stopped_and_carries_the_given_run_id(project: Path) -> None:
    pipeline = Pipeline.model_validate(
        {
            "name": "one",
            "stages": [
                {"name": "write", "prompt": "Write app.py.", "exit_when": [{"file_exists": "x"}]}
            ],
        }
    )

    async def main() -> tuple[str | None, str]:
        agent, stop = _WritesThenWaits(), asyncio.Event()
        runner = PipelineRunner(agent)
        run = asyncio.create_task(runner.run(pipeline, project, run_id="feed01", stop=stop))
        await agent.working.wait()
        stop.set()
        report = await run
        return report.error, report.run_id

    error, run_id = asyncio.run(main())
    assert error == STOPPED
    assert run_id == "feed01"


def test_an_agent_failure_that_follows_a_stop_is_reported_as_the_stop(
    fix_task: Task, project: Path
) -> None:
    """The stop ends the agent's CLI too; the failure its runtime then reports is the stop's
    doing, not an error of its own."""
    stop = asyncio.Event()

    class _FailsWhenStopped:
        name = "failing"

        async def run(self, request: AgentRequest, observer: AgentObserver) -> None:
            await stop.wait()
            raise AgentError("the CLI ended", transient=False)

    async def main() -> str | None:
        run = asyncio.create_task(Runner(_FailsWhenStopped()).run(fix_task, project, stop=stop))
        await asyncio.sleep(0)
        stop.set()
        return (await run).error

    assert asyncio.run(main()) == STOPPED
