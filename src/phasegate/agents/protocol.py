"""The agent boundary: one small Protocol every agent adapter implements.

An agent runs one session in a work directory, starting from a prompt. It reports what
happens as normalized transcript entries (assistant text, tool calls and results, the
session start and the final result) through :meth:`AgentObserver.on_entry`, in order. Each
time the agent is about to stop, it awaits :meth:`AgentObserver.on_stop`: a string is the
next instruction and the session goes on with it (Claude Code: a Stop hook that blocks with
that reason); ``None`` lets it stop.

When the request names tools in ``check_before``, the agent asks
:meth:`AgentObserver.before_tool` before each of their calls runs, once the call and
everything before it have been reported, and refuses the call when it gets a reason (Claude
Code: a PreToolUse hook that denies it).

When the request lists completion tools (``phase_complete``, ``submit_summary``), the agent
offers them to the model and answers each call with :meth:`AgentObserver.on_tool_call`, after
reporting the call itself as a :class:`~phasegate.evidence.transcript.ToolCall` entry. When it
carries an ``output_schema``, the agent asks its runtime for schema-constrained output.

The runner records the prompts it sends (the task prompt, feedback) itself, so an agent
does not report them back.

An agent may also say which version of its runtime it runs, with an optional method
``version() -> str | None`` (Claude Code: the CLI's version, ``2.1.332``). It is not part of
:class:`Agent`, so agents without it still are agents: the runner reads it with
:func:`agent_version` before the agent starts (off the event loop, so it may take a moment
the first time) and records it in the ``run.started`` / ``pipeline.started`` event and the
report; without it, or when it returns None, the version is unknown (null).

An agent may also offer the agent a grader of its run runs (the separate session that judges
a ``rubric`` check), with an optional method ``grading_agent(settings: GraderSettings) ->
Agent``: the same runtime and connection, with the grader's model, turns and cost cap. The
gate reads it with :func:`grading_agent` (None for an agent without one).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from phasegate.evidence.transcript import Entry, ToolCall
from phasegate.phases.grader import GraderSettings
from phasegate.prompts.completion_tools import ToolAnswer, ToolSpec


@dataclass(frozen=True, slots=True, kw_only=True)
class Confinement:
    """What the runtime's sandbox confines a session to (docs/sandbox.md): its commands may
    write in the work directory only, never under ``read_only`` (globs relative to it, a
    task's ``protect``), and reach only the hosts in ``network``."""

    network: tuple[str, ...] = ()
    read_only: tuple[str, ...] = ()
    own: tuple[Path, ...] = ()
    """phasegate's own record of the run inside the work directory (a pipeline's state
    folder, the event log it writes there): read-only to commands too, as the gate reads
    it and the agent must not rewrite it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentRequest:
    """What to run: the first prompt, and where."""

    prompt: str
    workdir: Path
    env: dict[str, str] = field(default_factory=dict)
    """Extra environment for the agent process, where there is one."""
    resume: str | None = None
    """A session id to continue (after a transient failure), where the agent supports it."""
    fork: bool = False
    """With ``resume``: continue that session's history under a new session id, leaving the
    resumed session as it was (Claude Code: ``fork_session``), so several branches of a
    pipeline can each go their own way from one conversation."""
    tools: tuple[ToolSpec, ...] = ()
    """Completion tools to offer the model; calls go to :meth:`AgentObserver.on_tool_call`."""
    output_schema: dict[str, Any] | None = None
    """Ask the runtime for output constrained to this JSON Schema (Claude Code: output_format)."""
    read_only: bool = False
    """The runtime refuses any write (Claude Code: plan mode); ``toolset`` names the reading
    tools offered."""
    toolset: tuple[str, ...] | None = None
    """The runtime's own tools to offer, by name; None: its default set. Completion tools
    (``tools``) are offered besides."""
    check_before: tuple[str, ...] | Literal["all"] = ()
    """Tool calls to put to :meth:`AgentObserver.before_tool` before they run: ``"all"``, or
    the full names of those tools (none by default: asking costs a round trip per call)."""
    confinement: Confinement | None = None
    """Run the session's commands in the runtime's sandbox (None: unconfined). The runner
    asks :func:`sandbox_problem` first: an agent that cannot confine never gets one."""
    stop_blocks: int | None = None
    """The most times the observer may answer a stop with an instruction in this session:
    the run's own budget (gate checks, stages and their retries, loop iterations). A runtime
    that ends a turn against a hook that blocked it too often (Claude Code stops obeying after
    9 in a row) is told to allow this many, so one run stays one session."""


class AgentObserver(Protocol):
    """What an agent reports to while it runs (implemented by the runner)."""

    def on_entry(self, entry: Entry) -> None:
        """Record one transcript entry, as it happens."""

    async def on_stop(self) -> str | None:
        """The agent wants to stop: return the next instruction, or None to let it stop."""

    def on_retry(self, *, attempt: int, reason: str, delay_ms: int, source: str) -> None:
        """A failed request is being retried (``source`` says who retries, e.g. the CLI)."""

    async def on_tool_call(self, name: str, arguments: dict[str, Any]) -> ToolAnswer:
        """The model called completion tool ``name`` (short name): judge it and answer."""

    def before_tool(self, call: ToolCall) -> str | None:
        """``call`` (already reported through :meth:`on_entry`, as everything the model said
        before it) is about to run: None lets it run; a reason refuses it, and the agent
        gives the model that reason as the call's error result instead of running it."""


class EntryCollector:
    """An :class:`AgentObserver` for a session no gate watches (a grader's): it keeps the
    entries reported, lets every stop happen, runs every tool, and refuses completion tools,
    which such a session is never offered."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []

    def on_entry(self, entry: Entry) -> None:
        """Keep ``entry``."""
        self.entries.append(entry)

    async def on_stop(self) -> str | None:
        """Let the session stop."""
        return None

    def on_retry(self, *, attempt: int, reason: str, delay_ms: int, source: str) -> None:
        """Nothing to record."""

    async def on_tool_call(self, name: str, arguments: dict[str, Any]) -> ToolAnswer:
        """An error answer: no completion tool is offered."""
        return ToolAnswer(ok=False, data={"error": f"{name} is not offered in this session"})

    def before_tool(self, call: ToolCall) -> str | None:
        """Let it run."""
        return None


@runtime_checkable
class Agent(Protocol):
    """Anything that can run a coding-agent session for phasegate."""

    name: str
    """Short name for reports and logs (``claude``, ``scripted``)."""

    async def run(self, request: AgentRequest, observer: AgentObserver) -> None:
        """Run one session to its end.

        Raises :class:`~phasegate.errors.AgentError` when the session cannot be carried out
        (API down, process crashed, timeout); entries reported before that are kept.
        """


def agent_version(agent: Agent) -> str | None:
    """What ``agent``'s optional ``version()`` method says (None without one, or when it
    returns anything but a non-empty string)."""
    version = getattr(agent, "version", None)
    if not callable(version):
        return None
    found = version()
    return found if isinstance(found, str) and found else None


def grading_agent(agent: Agent, settings: GraderSettings) -> Agent | None:
    """The agent a grader of ``agent``'s run runs (the same runtime and connection, the
    grader's model, turns and cost cap), from ``agent``'s optional ``grading_agent(settings)``
    method; None when it has none (a rubric is then never met)."""
    make = getattr(agent, "grading_agent", None)
    if not callable(make):
        return None
    made = make(settings)
    return made if isinstance(made, Agent) else None


def sandbox_problem(agent: Agent) -> str | None:
    """Why ``agent`` cannot run a session in its runtime's sandbox here (what to install),
    or None when it can: its optional ``sandbox_problem()`` method says; an agent without
    one cannot confine what it runs."""
    check = getattr(agent, "sandbox_problem", None)
    if not callable(check):
        return f"the {agent.name} agent has no sandbox to run its commands in"
    found = check()
    return found if isinstance(found, str) and found else None
