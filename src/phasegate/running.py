"""Running a definition: the one way a task, a pipeline or a Ralph loop is run, whoever asks.

``phasegate run``, ``pipeline run`` and ``resume``, ``loop``, ``execute``, the HTTP service's
runs and batch units all call :func:`run_definition` with the agent
:func:`~phasegate.agents.factory.build_agent` built, so an option means the same in each: a
time limit bounds the whole run with its retries, ``retries`` restarts a failed session, and
a definition's kind picks the runner (:class:`~phasegate.Runner`,
:class:`~phasegate.PipelineRunner`, :class:`~phasegate.LoopRunner`), never the caller.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import overload

from phasegate.agents.protocol import Agent
from phasegate.agents.retry import RetryPolicy
from phasegate.modes import DEFAULT_MAX_ATTEMPTS, Isolation, Mode
from phasegate.phases.grader import GraderSettings
from phasegate.phases.loop import Loop
from phasegate.phases.model import Task
from phasegate.phases.pipeline import Pipeline
from phasegate.phases.sandbox import SandboxMode, effective_sandbox
from phasegate.pipelines.loop import LoopReport, LoopRunner
from phasegate.pipelines.report import PipelineReport
from phasegate.pipelines.runner import PipelineRunner
from phasegate.tasks.report import RunReport
from phasegate.tasks.runner import Runner
from phasegate.telemetry.events import EventSink


@dataclass(frozen=True, slots=True, kw_only=True)
class RunOptions:
    """How a definition runs; each option applies where the definition has that concept.

    ``mode`` and ``max_attempts``: a task's (gate checks per run). ``isolation``: a pipeline's
    (one session, or one per stage). ``timeout``: seconds the whole run may take, retries
    included (None: the retry policy's default bound and no run deadline). ``retries``:
    sessions restarted after an agent failure (None: the retry policy's default).
    ``prompts_dir``: templates that replace the built-in prompts. ``on_event``: where the
    run's events go. ``record``: a folder to write the run's recording in when it ends
    (``docs/recordings.md``; None: not recorded). ``sandbox``: confine the agent (``on``,
    ``optional``) or not (``off``) whatever the definition's ``sandbox:`` says (None: as it
    says); ``sandbox_default``: the mode when neither says (docs/sandbox.md).
    ``max_parallel``: a pipeline's most stages at once, over its ``max_parallel`` (None: as
    the pipeline says). ``grader``: how the grader of ``rubric`` checks runs, field by field
    over the definition's ``grader:`` (docs/grader.md).
    """

    mode: Mode = "gate"
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    isolation: Isolation = "session"
    timeout: float | None = None
    retries: int | None = None
    prompts_dir: str | Path | None = None
    on_event: EventSink | None = None
    record: str | Path | None = None
    sandbox: SandboxMode | None = None
    sandbox_default: SandboxMode = "off"
    max_parallel: int | None = None
    grader: GraderSettings | None = None

    def retry_policy(self) -> RetryPolicy:
        """The retry policy ``timeout`` and ``retries`` describe."""
        policy = RetryPolicy()
        if self.timeout is not None:
            policy = replace(policy, max_total=self.timeout)
        if self.retries is not None:
            policy = replace(policy, session_retries=self.retries)
        return policy


@overload
async def run_definition(
    definition: Task,
    workdir: str | Path,
    agent: Agent,
    options: RunOptions = ...,
    *,
    inputs: Mapping[str, str] | None = ...,
    run_id: str | None = ...,
    stop: asyncio.Event | None = ...,
    restart: bool = ...,
    resume: bool = ...,
) -> RunReport: ...
@overload
async def run_definition(
    definition: Loop,
    workdir: str | Path,
    agent: Agent,
    options: RunOptions = ...,
    *,
    inputs: Mapping[str, str] | None = ...,
    run_id: str | None = ...,
    stop: asyncio.Event | None = ...,
    restart: bool = ...,
    resume: bool = ...,
) -> LoopReport: ...
@overload
async def run_definition(
    definition: Pipeline,
    workdir: str | Path,
    agent: Agent,
    options: RunOptions = ...,
    *,
    inputs: Mapping[str, str] | None = ...,
    run_id: str | None = ...,
    stop: asyncio.Event | None = ...,
    restart: bool = ...,
    resume: bool = ...,
) -> PipelineReport: ...
@overload
async def run_definition(
    definition: Task | Pipeline | Loop,
    workdir: str | Path,
    agent: Agent,
    options: RunOptions = ...,
    *,
    inputs: Mapping[str, str] | None = ...,
    run_id: str | None = ...,
    stop: asyncio.Event | None = ...,
    restart: bool = ...,
    resume: bool = ...,
) -> RunReport | PipelineReport: ...
async def run_definition(
    definition: Task | Pipeline | Loop,
    workdir: str | Path,
    agent: Agent,
    options: RunOptions = RunOptions(),
    *,
    inputs: Mapping[str, str] | None = None,
    run_id: str | None = None,
    stop: asyncio.Event | None = None,
    restart: bool = False,
    resume: bool = False,
) -> RunReport | PipelineReport:
    """Run ``definition`` in ``workdir`` with ``agent`` and return its report.

    ``inputs``: the values of its inputs, as text (a loop has none). ``run_id``: the id its
    events carry (default: a new one). ``stop``: set it to end the run as its time limit
    would. ``restart``: a pipeline or loop starts over even if ``workdir`` holds an unfinished
    run of it. ``resume``: a pipeline continues the unfinished run in ``workdir`` (raises
    :class:`~phasegate.errors.PipelineStateError` when there is none).
    """
    retry = options.retry_policy()
    sandbox = effective_sandbox(definition.sandbox, options.sandbox, options.sandbox_default)
    if sandbox.confined or definition.sandbox is not None:
        # Unconfined runs keep the definition as written (and its digest).
        definition = definition.model_copy(update={"sandbox": sandbox})
    if isinstance(definition, Task):
        runner = Runner(
            agent, mode=options.mode, max_attempts=options.max_attempts,
            prompts_dir=options.prompts_dir, on_event=options.on_event, retry=retry,
            timeout=options.timeout, grader=options.grader,
        )  # fmt: skip
        return await runner.run(
            definition, workdir, inputs=inputs, run_id=run_id, stop=stop, record=options.record
        )
    if isinstance(definition, Loop):
        loops = LoopRunner(
            agent, prompts_dir=options.prompts_dir, on_event=options.on_event, retry=retry,
            timeout=options.timeout, grader=options.grader,
        )  # fmt: skip
        return await loops.run(
            definition, workdir, restart=restart, run_id=run_id, stop=stop, record=options.record
        )
    pipelines = PipelineRunner(
        agent, isolation=options.isolation, prompts_dir=options.prompts_dir,
        on_event=options.on_event, retry=retry, timeout=options.timeout,
        max_parallel=options.max_parallel, grader=options.grader,
    )  # fmt: skip
    if resume:
        return await pipelines.resume(
            definition, workdir, inputs=inputs, stop=stop, record=options.record
        )
    return await pipelines.run(
        definition,
        workdir,
        restart=restart,
        inputs=inputs,
        run_id=run_id,
        stop=stop,
        record=options.record,
    )
