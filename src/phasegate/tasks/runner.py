"""The runner: prompt → agent session → evidence → gate → report, with events on the way.

Data flows one way. A :class:`Runner` holds the settings every run shares (the agent, the
mode, the attempt budget, the prompt templates, the event sink, the retry policy and the
timeout); each :meth:`Runner.run` starts a :class:`~phasegate.tasks.run.TaskRun`
that drives the agent, lets the gate judge, and returns a
:class:`~phasegate.tasks.report.RunReport`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

from phasegate.agents.protocol import Agent, AgentRequest
from phasegate.agents.retry import RetryPolicy
from phasegate.errors import UsageError
from phasegate.modes import DEFAULT_MAX_ATTEMPTS, MODES, Mode
from phasegate.phases.filled import task_with_values
from phasegate.phases.grader import GraderSettings
from phasegate.phases.model import Task
from phasegate.prompts.templates import PromptTemplates
from phasegate.recording.recorder import Recorder
from phasegate.tasks.report import RunReport
from phasegate.tasks.request import first_prompt, first_request
from phasegate.tasks.run import RunSettings, TaskRun
from phasegate.telemetry.events import EventSink, output_files
from phasegate.validators.judge import AnswerCheck
from phasegate.workspace.observer import work_directory


class Runner:
    """Runs phased tasks with one agent.

    ``mode``: ``gate`` (default) judges at every stop and sends feedback until every phase is
    accepted or ``max_attempts`` gate checks are spent; ``single-query`` judges once at the
    end; ``unstructured`` sends the task without phase scaffolding and judges once, without
    the marker rules (the A/B baseline). ``on_event`` receives every
    :class:`~phasegate.telemetry.events.RunEvent`; ``retry`` bounds restarts after transient
    failures; ``timeout`` (seconds) bounds the whole run, retries included. The files the
    sink writes (its ``output_files``, as an :class:`~phasegate.telemetry.log.EventLog`
    has) are never counted as the agent's work. ``check_answer`` reviews the output phase's
    JSON once it fits the schema: each sentence it returns refuses the answer and is fed back
    (``answer_refused``), so meaning can be checked where a schema cannot reach.
    ``grader``: how the grader of ``rubric`` checks runs (docs/grader.md), field by field over
    what the task's ``grader:`` says.
    """

    def __init__(
        self,
        agent: Agent,
        *,
        mode: Mode = "gate",
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        prompts_dir: str | Path | None = None,
        on_event: EventSink | None = None,
        retry: RetryPolicy | None = None,
        timeout: float | None = None,
        check_answer: AnswerCheck | None = None,
        grader: GraderSettings | None = None,
    ) -> None:
        if mode not in MODES:
            raise UsageError(
                f"unknown mode {mode!r}; choose one of: {', '.join(MODES)}", option="mode"
            )
        if max_attempts < 1:
            raise UsageError(
                f"max_attempts must be at least 1, got {max_attempts}", option="max_attempts"
            )
        self.agent = agent
        self.mode: Mode = mode
        self.max_attempts = max_attempts
        self.templates = PromptTemplates(prompts_dir)
        self.on_event = on_event
        self.retry = retry or RetryPolicy()
        self.timeout = timeout
        self.check_answer = check_answer
        self.grader = grader

    def prompt_for(self, task: Task) -> str:
        """The first prompt this runner sends for ``task`` in its mode."""
        return first_prompt(task, self.mode, self.templates)

    def request_for(self, task: Task, workdir: Path) -> AgentRequest:
        """The first request: the prompt, plus the completion tools and structured output the
        task asks for (the unstructured baseline gets neither)."""
        return first_request(
            task, self.mode, self.templates, workdir, max_attempts=self.max_attempts
        )

    async def run(
        self,
        task: Task,
        workdir: str | Path,
        *,
        inputs: Mapping[str, str] | None = None,
        run_id: str | None = None,
        stop: asyncio.Event | None = None,
        record: str | Path | None = None,
    ) -> RunReport:
        """Run ``task`` in ``workdir`` and return its report (never raises for a bad run).

        ``inputs``: the values of the task's inputs, as text; each ``{{ id }}`` in the
        instructions becomes its value (a default where none is given) before any prompt is
        built. A required input without a value, a placeholder value (TBD) or an id the task
        does not declare raises :class:`~phasegate.errors.InputsInvalidError` before the
        agent starts. ``run_id``: the id its events and report carry (default: a fresh one).
        ``stop``: set it to end the run early, as the timeout would; the report's error then
        says so and ``on_reject: revert`` still applies. ``record``: a folder to write the
        run's recording in (``docs/recordings.md``) when it ends, however it ends; a folder
        that holds anything but an earlier recording raises
        :class:`~phasegate.errors.RecordingFolderError` before the agent starts.
        """
        task = task_with_values(task, inputs)
        root = work_directory(workdir)
        recorder = Recorder(record) if record is not None else None
        session = TaskRun(self._settings(stop), task, root, run_id, recorder=recorder)
        return await session.run()

    def run_sync(
        self,
        task: Task,
        workdir: str | Path,
        *,
        inputs: Mapping[str, str] | None = None,
        record: str | Path | None = None,
    ) -> RunReport:
        """:meth:`run` for code that is not async."""
        return asyncio.run(self.run(task, workdir, inputs=inputs, record=record))

    def _settings(self, stop: asyncio.Event | None = None) -> RunSettings:
        """The settings as they stand now, fixed for one run."""
        return RunSettings(
            stop=stop,
            agent=self.agent,
            mode=self.mode,
            max_attempts=self.max_attempts,
            templates=self.templates,
            on_event=self.on_event,
            retry=self.retry,
            timeout=self.timeout,
            unobserved=output_files(self.on_event),
            check_answer=self.check_answer,
            grader=self.grader,
        )
