"""The pipeline runner: stages in one agent session, handed over by the Stop hook.

Each time the agent tries to stop, the runner checks the current stage: its ``exit_when``
checks against the disk and the stage's transcript, and for a stage with a phased ``task``
that task's :class:`~phasegate.tasks.gate.PhaseGate`. When something fails the stop is
blocked with structured feedback; when everything holds the stop is blocked with the next
stage's prompt; after the last stage the agent may stop. A stage that keeps failing goes
back to an earlier stage (``on_fail.back_to``) a bounded number of times, or ends the run
rejected.

Every transition is written to ``.phasegate/pipeline-state.json`` before the agent hears of
it, so :meth:`PipelineRunner.resume` continues a killed run from the stage it was in: with
the agent's own session resume where it can, otherwise in a fresh session with a recap.

``isolation="process"`` runs each stage in its own session instead, for comparison: the
agent then loses what it learnt in earlier stages. How one call drives the agent lives in
:mod:`~phasegate.pipelines.run`; how a stage is checked and handed over in
:mod:`~phasegate.pipelines.progress`.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from phasegate.agents.observer import ObserverSettings
from phasegate.agents.protocol import Agent
from phasegate.agents.retry import RetryPolicy
from phasegate.errors import LinkedPathError, PipelineStateError, UsageError
from phasegate.evidence.workspace import WorkspaceSnapshot
from phasegate.modes import ISOLATIONS, STATE_DIR, Isolation
from phasegate.phases.filled import pipeline_with_values
from phasegate.phases.grader import GraderSettings
from phasegate.phases.pipeline import Pipeline
from phasegate.phases.stage_graph import StageGraph
from phasegate.pipelines.parallel import ParallelRun
from phasegate.pipelines.report import PipelineReport
from phasegate.pipelines.run import PipelineRun
from phasegate.pipelines.state import (
    PipelineState,
    load_baseline,
    load_state,
    refuse_to_overwrite,
    stage_records,
    state_folder,
    state_path,
)
from phasegate.prompts.templates import PromptTemplates
from phasegate.recording.model import RecordingKind
from phasegate.recording.recorder import Recorder
from phasegate.telemetry.events import EventSink, new_run_id, output_files
from phasegate.workspace.observer import work_directory


class PipelineRunner:
    """Runs pipelines with one agent.

    ``isolation``: ``session`` (default) runs every stage in one session; ``process`` starts
    a new session per stage. ``on_event`` receives every
    :class:`~phasegate.telemetry.events.RunEvent`; ``retry`` bounds session restarts
    after transient failures; ``timeout`` (seconds) bounds one call of :meth:`run` or
    :meth:`resume`. Neither the state in ``.phasegate`` nor the files the sink writes (its
    ``output_files``) count as the agent's work. ``max_parallel`` bounds the stages of a
    pipeline with branches (``needs:``) that run at once, over the pipeline's own
    ``max_parallel`` (docs/pipelines.md). ``grader``: how the grader of ``rubric`` checks
    runs (docs/grader.md), over what the pipeline's ``grader:`` says.
    """

    def __init__(
        self,
        agent: Agent,
        *,
        isolation: Isolation = "session",
        prompts_dir: str | Path | None = None,
        on_event: EventSink | None = None,
        retry: RetryPolicy | None = None,
        timeout: float | None = None,
        max_parallel: int | None = None,
        grader: GraderSettings | None = None,
    ) -> None:
        if isolation not in ISOLATIONS:
            raise UsageError(
                f"unknown isolation {isolation!r}; choose one of: {', '.join(ISOLATIONS)}",
                option="isolation",
            )
        self.agent = agent
        self.isolation: Isolation = isolation
        self.templates = PromptTemplates(prompts_dir)
        self.on_event = on_event
        self.retry = retry or RetryPolicy()
        self.timeout = timeout
        self.max_parallel = max_parallel
        self.grader = grader
        """The most stages of a parallel pipeline that run at once, over the file's
        ``max_parallel`` (None: the file's)."""
        self._recorded_as: RecordingKind = "pipeline"
        self._reshape: Callable[[PipelineReport], PipelineReport] | None = None
        """What a :class:`~phasegate.LoopRunner` records its runs as, and makes of a report."""

    async def run(
        self,
        pipeline: Pipeline,
        workdir: str | Path,
        *,
        restart: bool = False,
        inputs: Mapping[str, str] | None = None,
        run_id: str | None = None,
        stop: asyncio.Event | None = None,
        record: str | Path | None = None,
    ) -> PipelineReport:
        """Run ``pipeline`` from its first stage in ``workdir``.

        An unfinished run's state in ``workdir`` is never overwritten silently: resume it, or
        pass ``restart=True`` to start over. ``inputs``: the values of the pipeline's inputs
        (and its stage tasks'), as text, filled into stage prompts and stage tasks before
        anything runs; the rules of :meth:`Runner.run <phasegate.Runner.run>` apply.
        ``run_id``: the id its events and report carry (default: a fresh one). ``stop``: set
        it to end the run early, as the timeout would. ``record``: a folder to write the run's
        recording in (``docs/recordings.md``) when it ends, however it ends; a folder that
        holds anything but an earlier recording raises
        :class:`~phasegate.errors.RecordingFolderError` before the agent starts.
        """
        pipeline = pipeline_with_values(pipeline, inputs)
        root = work_directory(workdir)
        recorder = Recorder(record) if record is not None else None
        if not restart:
            refuse_to_overwrite(root)
        _refuse_unwritable(root)
        state = PipelineState(
            pipeline=pipeline.name,
            digest=pipeline.digest(),
            run_id=run_id or new_run_id(),
            isolation=self.isolation,
            stages=stage_records(pipeline),
        )
        if not StageGraph.of(pipeline).sequential:
            return await self._parallel(pipeline, root, state, stop, recorder).start()
        return await self._run(pipeline, root, state, stop, recorder).start()

    async def resume(
        self,
        pipeline: Pipeline,
        workdir: str | Path,
        *,
        inputs: Mapping[str, str] | None = None,
        stop: asyncio.Event | None = None,
        record: str | Path | None = None,
    ) -> PipelineReport:
        """Continue the interrupted run in ``workdir`` from the stage it was in (``inputs``,
        ``stop``, ``record``: as for :meth:`run`; give the same input values the run started
        with). A recording of a resumed run holds what this call saw.

        Raises :class:`~phasegate.errors.PipelineStateError` when there is no state, when it
        is corrupt, finished, or belongs to another pipeline definition (other input values
        make another definition).
        """
        pipeline = pipeline_with_values(pipeline, inputs)
        root = work_directory(workdir)
        recorder = Recorder(record) if record is not None else None
        state = load_state(root)
        where = state_path(root)
        if state.pipeline != pipeline.name or state.digest != pipeline.digest():
            raise PipelineStateError(
                where,
                "digest",
                f"the run was started with another definition of pipeline {state.pipeline!r} "
                "(its stages, prompts or checks changed since); resume with the same pipeline "
                "file, or start the pipeline over",
                option="restart",
            )
        if state.status in ("accepted", "rejected"):
            raise PipelineStateError(
                where,
                "status",
                f"the run {state.run_id} already finished ({state.status}); nothing to resume. "
                "Start the pipeline over for a new run",
                option="restart",
            )
        _refuse_unwritable(root)
        if state.branches:
            return await self._parallel(pipeline, root, state, stop, recorder).resume()
        baseline = load_baseline(root)
        return await self._run(pipeline, root, state, stop, recorder, baseline).resume()

    def _run(
        self,
        pipeline: Pipeline,
        root: Path,
        state: PipelineState,
        stop: asyncio.Event | None,
        recorder: Recorder | None,
        baseline: WorkspaceSnapshot | None = None,
    ) -> PipelineRun:
        """The run of one call of :meth:`run` or :meth:`resume`."""
        return PipelineRun(
            self._settings(stop),
            pipeline,
            root,
            state,
            baseline=baseline,
            recorder=recorder,
            recorded_as=self._recorded_as,
            reshape=self._reshape,
        )

    def _parallel(
        self,
        pipeline: Pipeline,
        root: Path,
        state: PipelineState,
        stop: asyncio.Event | None,
        recorder: Recorder | None,
    ) -> ParallelRun:
        """The run of a pipeline whose stages run in branches."""
        bound = self.max_parallel if self.max_parallel is not None else pipeline.max_parallel
        return ParallelRun(
            self._settings(stop), pipeline, root, state, max_parallel=bound, recorder=recorder
        )

    def _settings(self, stop: asyncio.Event | None = None) -> ObserverSettings:
        """The settings as they stand now, fixed for one run."""
        return ObserverSettings(
            stop=stop,
            agent=self.agent,
            retry=self.retry,
            templates=self.templates,
            on_event=self.on_event,
            timeout=self.timeout,
            unobserved=output_files(self.on_event),
            grader=self.grader,
        )

    def run_sync(
        self,
        pipeline: Pipeline,
        workdir: str | Path,
        *,
        restart: bool = False,
        inputs: Mapping[str, str] | None = None,
        record: str | Path | None = None,
    ) -> PipelineReport:
        """:meth:`run` for code that is not async."""
        return asyncio.run(
            self.run(pipeline, workdir, restart=restart, inputs=inputs, record=record)
        )

    def resume_sync(
        self,
        pipeline: Pipeline,
        workdir: str | Path,
        *,
        inputs: Mapping[str, str] | None = None,
        record: str | Path | None = None,
    ) -> PipelineReport:
        """:meth:`resume` for code that is not async."""
        return asyncio.run(self.resume(pipeline, workdir, inputs=inputs, record=record))


def _refuse_unwritable(root: Path) -> None:
    """Refuse, before the agent starts, a work directory the run's state cannot be written
    in (read-only, ``.phasegate`` not a directory, or a symbolic link that may lead out of
    the work directory): a :class:`UsageError`."""
    directory = root / STATE_DIR
    try:
        state_folder(root, create=True)
        handle, probe = tempfile.mkstemp(prefix=".writable.", dir=directory)
        os.close(handle)
        os.unlink(probe)
    except LinkedPathError as exc:
        raise UsageError(
            f"cannot keep the pipeline's state in {directory}: {exc.problem}; a pipeline "
            "writes its state only inside the work directory, so remove it, or run in a "
            "copy of the work directory without it",
            option="workdir",
        ) from None
    except OSError as exc:
        problem = "it is not a directory" if isinstance(exc, FileExistsError) else exc.strerror
        raise UsageError(
            f"cannot keep the pipeline's state in {directory}: {problem or exc}; a "
            "pipeline writes its state into the work directory, so make it writable, or run "
            "in a writable copy of it",
            option="workdir",
        ) from None
