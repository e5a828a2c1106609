"""What a task run and a pipeline run share as the agent's observer.

Both record the transcript as it comes (with the time of each entry and the name behind
each tool call id) and each attempt to leave the sandbox as it shows, record the prompts they
send, run the agent under the retry policy and report retries as ``retry.scheduled`` events,
bound the run by its timeout, and hand events to the sink. What differs (how a stop is
judged, what a restarted session is told, what an event carries) is left to
:meth:`RunObserver.restart_after`, :meth:`RunObserver.run_event` and the subclass's own
observer methods.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tenacity import RetryCallState

from phasegate.agents.protocol import (
    Agent,
    AgentRequest,
    Confinement,
    agent_version,
    grading_agent,
    sandbox_problem,
)
from phasegate.agents.retry import RetryPolicy, retry_delay_ms
from phasegate.errors import RunError, UsageError
from phasegate.evidence.confinement import blocked_in
from phasegate.evidence.transcript import (
    AssistantText,
    Entry,
    SandboxBlocked,
    SessionStart,
    ToolCall,
    ToolRefused,
    ToolResult,
    UserText,
)
from phasegate.modes import STATE_DIR
from phasegate.phases.grader import GraderSettings
from phasegate.phases.sandbox import Sandbox, SandboxOutcome
from phasegate.prompts.completion_tools import ToolAnswer
from phasegate.prompts.gate_text import gate_characters
from phasegate.prompts.templates import PromptTemplates
from phasegate.telemetry.events import (
    AttemptBlocked,
    EventData,
    EventSink,
    RetryScheduled,
    RunEvent,
)

_WORK = (AssistantText, ToolCall, ToolResult)

STOPPED = "the run was stopped before it finished"
"""The error of a run ended through its ``stop`` event."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ObserverSettings:
    """What a runner fixes for each run it starts."""

    agent: Agent
    retry: RetryPolicy
    templates: PromptTemplates
    on_event: EventSink | None
    timeout: float | None
    """Seconds the whole run may take, retries included (None: no limit)."""
    unobserved: tuple[Path, ...] = ()
    """Files phasegate writes during the run (the event log): never the agent's work."""
    stop: asyncio.Event | None = None
    """Set to end the run early, as its timeout would: the agent stops and what it did is
    judged (None: the run cannot be stopped this way)."""
    grader: GraderSettings | None = None
    """The caller's settings for the grader of rubric checks, over the definition's."""


class RunObserver:
    """The bookkeeping every run keeps while one agent works (subclassed by the runners)."""

    def __init__(self, settings: ObserverSettings) -> None:
        self.settings = settings
        self.agent = settings.agent
        self.retry = settings.retry
        self.entries: list[Entry] = []
        self.times: list[float] = []
        """When each entry arrived (monotonic seconds)."""
        self.call_names: dict[str, str] = {}
        """Tool name of each call seen, by call id."""
        self.calls: dict[str, ToolCall] = {}
        """Each call seen, by call id."""
        self.request: AgentRequest | None = None
        """The request the agent runs next (or is running)."""
        self.session_retries = 0
        self.api_retries = 0
        self.agent_version: str | None = None
        """The version of what the agent runs (see :meth:`learn_agent_version`)."""
        self.sandbox: SandboxOutcome | None = None
        """How the run is confined (see :meth:`confine`); None: not asked to be."""
        self.confinement: Confinement | None = None
        """What every request of the run asks the agent to confine its session to."""
        self.own_words: tuple[str, ...] = ()
        """The definition's words its prompts embed (:mod:`phasegate.prompts.gate_text`)."""
        self.gate_text: dict[int, int] = {}
        """Characters of each prompt the gate wrote, by the prompt's transcript position."""

    # -- recording ----------------------------------------------------------------------
    def record(self, entry: Entry) -> None:
        """Keep ``entry`` in the transcript, with its time (and its name, for a tool call)."""
        self.entries.append(entry)
        self.times.append(time.monotonic())
        if isinstance(entry, ToolCall):
            self.call_names[entry.id] = entry.name
            self.calls[entry.id] = entry

    def record_prompt(self, text: str) -> None:
        """Keep a prompt phasegate sent (agents do not report them back), and how much of it
        is the gate's own text."""
        self.gate_text[len(self.entries)] = gate_characters(text, self.own_words)
        self.record(UserText(text=text))

    def record_blocked(self, entry: ToolRefused | ToolResult) -> None:
        """Record each attempt to leave the sandbox that ``entry`` (a refusal, or the result of
        a call that ran) shows, right after it, and emit its ``sandbox.blocked`` event
        (:meth:`blocked_event`); nothing when the run asked for no sandbox. What counts is
        :func:`~phasegate.evidence.confinement.blocked_in`'s to say."""
        if self.sandbox is None:
            return
        call = self.calls.get(entry.tool_use_id)
        for found in blocked_in(entry, call, commands=self.sandbox.confined):
            self.record(found)
            self.emit(self.blocked_event(found))

    def tool_name(self, result: ToolResult) -> str | None:
        """The name of the tool whose result this is (None if its call was not seen)."""
        return self.call_names.get(result.tool_use_id)

    def worked_since(self, position: int) -> bool:
        """Whether the agent said or did anything after transcript position ``position``."""
        return any(isinstance(e, _WORK) for e in self.entries[max(position, 0) :])

    def session_id(self) -> str | None:
        """The latest session the agent reported, if any."""
        return next(
            (e.session_id for e in reversed(self.entries) if isinstance(e, SessionStart)), None
        )

    # -- running ------------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def deadline(self) -> AsyncIterator[None]:
        """The run's timeout around the block: running past it is a :class:`RunError`."""
        stop = self.settings.stop
        try:
            async with asyncio.timeout(self.settings.timeout) as scope:
                watcher = asyncio.create_task(_end_on(stop, scope)) if stop is not None else None
                try:
                    yield
                finally:
                    if watcher is not None:
                        watcher.cancel()
        except TimeoutError:
            if stop is not None and stop.is_set():
                raise RunError(STOPPED) from None
            timeout = self.settings.timeout
            raise RunError(f"the run did not finish within its timeout of {timeout:g} s") from None
        except RunError:
            if stop is not None and stop.is_set():
                # Once stopped, a failure of the agent that follows is the stop's doing.
                raise RunError(STOPPED) from None
            raise

    async def learn_agent_version(self) -> str | None:
        """Ask the agent which version of its runtime it runs (:func:`agent_version`) and keep
        the answer in :attr:`agent_version`. It is asked in a thread: a CLI given by path is
        started to say it (once per process)."""
        if callable(getattr(self.agent, "version", None)):
            self.agent_version = await asyncio.to_thread(agent_version, self.agent)
        return self.agent_version

    def grading_agent(self, written: GraderSettings | None) -> Agent | None:
        """The agent the grader of this run's ``rubric`` checks runs: the run's agent's, with
        the caller's settings over ``written`` (the definition's); None when the agent cannot
        start one."""
        settings = (self.settings.grader or GraderSettings()).over(written)
        return grading_agent(self.agent, settings)

    async def confine(
        self, sandbox: Sandbox | None, read_only: tuple[str, ...], workdir: Path
    ) -> None:
        """Decide how the run is confined, before anything starts: a sandbox that is ``on``
        and cannot run here raises :class:`~phasegate.errors.UsageError` (what to install);
        an ``optional`` one runs unconfined and :attr:`sandbox` says why. ``read_only``: the
        globs the definition protects; phasegate's own files in ``workdir`` (its state
        folder, the files :attr:`ObserverSettings.unobserved`) are read-only too. The agent
        is asked in a thread (it may start programs to tell)."""
        if sandbox is None or not sandbox.confined:
            self.sandbox = None if sandbox is None else SandboxOutcome(mode="off", confined=False)
            return
        problem = await asyncio.to_thread(sandbox_problem, self.agent)
        if problem is not None and sandbox.mode == "on":
            raise UsageError(
                f"sandbox: on, but the sandbox cannot run here: {problem}. Install what it "
                "needs (docs/sandbox.md), or set sandbox: optional to run unconfined when it "
                "cannot",
                option="sandbox",
            )
        self.sandbox = SandboxOutcome(
            mode=sandbox.mode, confined=problem is None, network=sandbox.network,
            unavailable=problem,
        )  # fmt: skip
        if problem is None:
            own = (workdir / STATE_DIR, *self.settings.unobserved)
            inside = tuple(p for p in own if p.resolve().is_relative_to(workdir.resolve()))
            self.confinement = Confinement(network=sandbox.network, read_only=read_only, own=inside)

    async def run_agent(self) -> None:
        """Run :attr:`request`; after a transient failure, restart it as
        :meth:`restart_after` decides, within the retry policy."""
        async for attempt in self.retry.retrying(self._before_retry, self.wants_restart):
            with attempt:
                assert self.request is not None
                await self.agent.run(self.request, self)

    def on_retry(self, *, attempt: int, reason: str, delay_ms: int, source: str) -> None:
        """The agent's runtime retries a request itself: a ``retry.scheduled`` event."""
        self.api_retries += 1
        self.emit(RetryScheduled(attempt=attempt, reason=reason, delay_ms=delay_ms, source=source))

    def _before_retry(self, state: RetryCallState) -> None:
        self.session_retries += 1
        failure = state.outcome.exception() if state.outcome is not None else None
        self.emit(
            RetryScheduled(
                attempt=self.session_retries,
                reason=str(failure),
                delay_ms=retry_delay_ms(state),
                source="phasegate",
            )
        )
        self.restart_after(str(failure))

    # -- for subclasses -----------------------------------------------------------------
    def on_entry(self, entry: Entry) -> None:
        """Record one entry the agent reports (subclasses add what they watch for)."""
        self.record(entry)

    async def on_stop(self) -> str | None:
        """The agent wants to stop: the next instruction, or None."""
        raise NotImplementedError

    async def on_tool_call(self, name: str, arguments: dict[str, Any]) -> ToolAnswer:
        """The model called a completion tool: judge it and answer."""
        raise NotImplementedError

    def before_tool(self, call: ToolCall) -> str | None:
        """A call is about to run: None lets it (subclasses refuse what their policy forbids,
        recording the refusal)."""
        return None

    def wants_restart(self) -> bool:
        """Whether a session that failed transiently is worth running again (default: yes)."""
        return True

    def restart_after(self, failure: str) -> None:
        """Set :attr:`request` for the attempt after ``failure`` (default: the same again)."""

    def blocked_event(self, entry: SandboxBlocked) -> EventData:
        """The ``sandbox.blocked`` event of ``entry`` (subclasses say in which phase or
        stage)."""
        return AttemptBlocked.of(entry)

    def emit(self, data: EventData) -> None:
        """Hand one event of this run to the sink, if there is one."""
        if self.settings.on_event is not None:
            self.settings.on_event(self.run_event(data))

    def run_event(self, data: EventData) -> RunEvent:
        """``data`` as an event of this run (run id, task, mode)."""
        raise NotImplementedError


async def _end_on(stop: asyncio.Event, scope: asyncio.Timeout) -> None:
    """Bring the deadline forward to now once ``stop`` is set: the run then ends the way a
    timeout ends it (the agent is cancelled, what it did is still judged)."""
    await stop.wait()
    scope.reschedule(asyncio.get_running_loop().time())
