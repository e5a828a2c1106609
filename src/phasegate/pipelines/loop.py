"""Running a Ralph loop: the pipeline runner, on the loop's one-stage pipeline.

:class:`LoopRunner` adds no machinery of its own: :meth:`~phasegate.phases.loop.Loop.pipeline`
turns the loop into one stage whose exit check is ``said: PROMISE`` and whose retry budget is
the iteration limit, and :class:`~phasegate.pipelines.runner.PipelineRunner` runs it in
one session, with its Stop-hook gate, state file, retries, timeout and events. An iteration
is one stop of the agent, so one check of the stage. What the loop adds is counting them: the
:class:`LoopReport` says how many iterations the run took, and the run's ``pipeline.started``
and ``pipeline.completed`` events carry the loop's promise, its bound and the count.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

from pydantic import Field

from phasegate.agents.protocol import Agent
from phasegate.agents.retry import RetryPolicy
from phasegate.phases.grader import GraderSettings
from phasegate.phases.loop import Loop
from phasegate.pipelines.report import PipelineReport
from phasegate.pipelines.runner import PipelineRunner
from phasegate.telemetry.events import (
    EventSink,
    PipelineCompleted,
    PipelineStarted,
    RunEvent,
    StageChecked,
    output_files,
)


class LoopReport(PipelineReport):
    """A pipeline report with the loop's count: its one stage is the loop."""

    promise: str = Field(description="The promise that ends the loop, normalised.")
    max_iterations: int | None = Field(description="The iteration limit; null: unbounded.")
    iterations: int = Field(description="Iterations taken: times the agent stopped.")
    promise_said: bool = Field(description="Whether the agent said the promise.")


class LoopRunner:
    """Runs Ralph loops with one agent; the settings are :class:`PipelineRunner`'s."""

    def __init__(
        self,
        agent: Agent,
        *,
        prompts_dir: str | Path | None = None,
        on_event: EventSink | None = None,
        retry: RetryPolicy | None = None,
        timeout: float | None = None,
        grader: GraderSettings | None = None,
    ) -> None:
        self.agent = agent
        self.prompts_dir = prompts_dir
        self.on_event = on_event
        self.retry = retry
        self.timeout = timeout
        self.grader = grader

    async def run(
        self,
        loop: Loop,
        workdir: str | Path,
        *,
        restart: bool = False,
        run_id: str | None = None,
        stop: asyncio.Event | None = None,
        record: str | Path | None = None,
    ) -> LoopReport:
        """Run ``loop`` in ``workdir`` until the promise is said or the iterations are spent
        (``restart``, ``run_id``, ``stop``, ``record``: as for :meth:`PipelineRunner.run`;
        the recording's kind is ``loop``, its report this :class:`LoopReport`)."""
        events = _LoopEvents(self.on_event, loop) if self.on_event is not None else None
        runner = PipelineRunner(
            self.agent,
            prompts_dir=self.prompts_dir,
            on_event=events,
            retry=self.retry,
            timeout=self.timeout,
            grader=self.grader,
        )
        runner._recorded_as = "loop"
        runner._reshape = lambda report: _loop_report(report, loop)
        report = await runner.run(
            loop.pipeline(), workdir, restart=restart, run_id=run_id, stop=stop, record=record
        )
        assert isinstance(report, LoopReport)
        return report

    def run_sync(
        self,
        loop: Loop,
        workdir: str | Path,
        *,
        restart: bool = False,
        record: str | Path | None = None,
    ) -> LoopReport:
        """:meth:`run` for code that is not async."""
        return asyncio.run(self.run(loop, workdir, restart=restart, record=record))


def _loop_report(report: PipelineReport, loop: Loop) -> LoopReport:
    """The pipeline's report with the loop's count: its one stage is the loop."""
    (stage,) = report.stages
    return LoopReport.model_validate(
        {
            **dict(report),
            "promise": loop.promise,
            "max_iterations": loop.max_iterations,
            "iterations": stage.attempts,
            "promise_said": stage.status == "accepted",
        }
    )


class _LoopEvents:
    """The pipeline's events, with the loop's fields added where they belong."""

    def __init__(self, sink: EventSink, loop: Loop) -> None:
        self.sink = sink
        self.loop = {"promise": loop.promise, "max_iterations": loop.max_iterations}
        self.iterations = 0
        self.output_files = output_files(sink)

    def __call__(self, event: RunEvent) -> None:
        data = event.data
        if isinstance(data, StageChecked):
            self.iterations += 1
        elif isinstance(data, PipelineStarted):
            event = dataclasses.replace(event, data=dataclasses.replace(data, loop=self.loop))
        elif isinstance(data, PipelineCompleted):
            data = dataclasses.replace(data, iterations=self.iterations)
            event = dataclasses.replace(event, data=data)
        self.sink(event)
