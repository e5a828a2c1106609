"""The normalized transcript: the ordered record of what happened in a run.

Every agent adapter, and the parser of saved Claude Code transcripts, produces the same
entries, so validators judge one shape whatever ran the agent. Where an entry came from
matters: only :class:`AssistantText` can carry a marker or the output JSON; a
:class:`ToolResult` is the tool's own word on success; :class:`UserText` is what the agent
was told (prompts, feedback) and never counts as evidence.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from phasegate._files.text import well_formed


class _Entry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SessionStart(_Entry):
    """The agent session began (Claude Code's ``system/init``): where it ran and with what."""

    kind: Literal["session"] = "session"
    cwd: str | None = None
    session_id: str | None = None
    model: str | None = None
    tools: tuple[str, ...] = ()


class UserText(_Entry):
    """Text sent to the agent: the task prompt, gate feedback, a next-stage prompt."""

    kind: Literal["user"] = "user"
    text: str


class AssistantText(_Entry):
    """A block of text the model wrote. The only place markers and output JSON count."""

    kind: Literal["assistant"] = "assistant"
    text: str


class AgentRef(_Entry):
    """A subagent: who made a call when the session's main agent did not.

    One notion for every source: Claude Code's stream messages (``parent_tool_use_id``),
    its session logs (``isSidechain`` and ``agentId`` lines, ``progress`` records, the
    ``subagents/agent-<id>.jsonl`` files beside a session) and its hooks (``agent_id`` and
    ``agent_type`` in a hook's input inside a subagent: :meth:`from_hook`).
    """

    id: str
    """The subagent's id (Claude Code's ``agentId``), else the id of the Agent (Task) tool
    call that started it; ``sidechain`` for a session-log line that names neither."""
    type: str | None = None
    """Its kind (the Agent tool's ``subagent_type``: ``general-purpose``, ``Explore``, …)."""
    parent: str | None = None
    """The id of the Agent (Task) tool call that started it, when known."""

    @classmethod
    def from_hook(cls, hook_input: Mapping[str, Any]) -> AgentRef | None:
        """The subagent a Claude Code hook ran in (its input's ``agent_id``, ``agent_type``),
        or None when the hook ran for the main agent."""
        agent_id = hook_input.get("agent_id")
        if not isinstance(agent_id, str) or not agent_id:
            return None
        agent_type = hook_input.get("agent_type")
        return cls(id=agent_id, type=agent_type if isinstance(agent_type, str) else None)

    @property
    def label(self) -> str:
        """How reports name it: its type and id (``general-purpose a6047be``), else its id."""
        return f"{self.type} {self.id}" if self.type else self.id


class ToolCall(_Entry):
    """The model asked for a tool: ``id`` links it to its :class:`ToolResult`.

    ``agent`` says who made the call: None for the session's main agent, else the subagent
    that ran it (see :class:`AgentRef`); a subagent's call is the run's work all the same."""

    kind: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    agent: AgentRef | None = None

    @property
    def brief(self) -> str:
        """What the call asks for, in at most :data:`BRIEF_LIMIT` characters: the path, the
        command or the pattern it names, else its input as JSON."""
        for key in _BRIEF_KEYS:
            value = self.input.get(key)
            if isinstance(value, str):
                return _capped(value)
        return _capped(json.dumps(self.input, ensure_ascii=False, default=str))


BRIEF_LIMIT = 200
"""The longest :attr:`ToolCall.brief`; longer ones end in "…"."""
_BRIEF_KEYS = ("file_path", "notebook_path", "path", "command", "pattern", "url", "query")


def _capped(text: str) -> str:
    return text if len(text) <= BRIEF_LIMIT else text[: BRIEF_LIMIT - 1] + "…"


class ToolResult(_Entry):
    """What running a tool gave back. ``ok`` is False for an error result. ``agent``: as
    its :class:`ToolCall`'s."""

    kind: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    ok: bool
    content: str = ""
    agent: AgentRef | None = None


class ToolRefused(_Entry):
    """The call ``tool_use_id`` was refused before it ran (a phase's tool policy, a protected
    path): it did nothing, and never counts as the tool having been used. Its result, an error
    carrying ``reason``, follows as the runtime reports it."""

    kind: Literal["refusal"] = "refusal"
    tool_use_id: str
    name: str
    input: str = ""
    """What the call asked for (:attr:`ToolCall.brief`)."""
    reason: str
    phase: int | None = None
    """The phase (1-based) that was current, or None outside a phased task."""


BlockedKind = Literal["file_tool", "path", "host"]
"""What the sandbox kept in: a file tool's write, a command's write, a command's connection."""


class SandboxBlocked(_Entry):
    """The sandbox kept the call ``tool_use_id`` in: one attempt to leave it (docs/sandbox.md).

    A run that asked for a sandbox records one right after the entry that shows it (the
    call's :class:`ToolRefused`, or its :class:`ToolResult`), as that entry arrives; only
    :func:`phasegate.evidence.confinement.blocked_in` makes them. ``target`` and ``detail``
    are the agent's and the tool's own text, shortened to one printable line: data, never
    a marker."""

    kind: Literal["blocked"] = "blocked"
    blocked: BlockedKind
    tool: str
    tool_use_id: str
    target: str
    """What was kept in: the file a file tool named, the command whose write was turned
    away, the host (and port) a command tried to reach."""
    detail: str
    """The line that says so: the refusal, the command's error, the proxy's deny."""


class Notice(_Entry):
    """Something the agent runtime said that is not model output (e.g. a synthetic
    ``API Error`` message). Never a marker, never JSON."""

    kind: Literal["notice"] = "notice"
    text: str


class StopOverridden(_Entry):
    """The agent runtime ended the model's turn although a Stop hook blocked it: Claude Code
    overrides a hook that blocked ``blocks`` times in a row (9 by default). Not model output;
    a session that was to go on ended here."""

    kind: Literal["stop_overridden"] = "stop_overridden"
    blocks: int | None = None
    text: str = ""


TOKEN_COUNTS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)
"""The token counts of a :class:`Usage`, by field name."""


class Usage(BaseModel):
    """Tokens and cost, where the agent reports them."""

    model_config = ConfigDict(frozen=True)

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cost_usd: float | None = None

    @property
    def is_zero(self) -> bool:
        """No tokens of any count, and no cost (an unknown cost is none)."""
        return not self.cost_usd and not any(getattr(self, name) for name in TOKEN_COUNTS)

    def __add__(self, other: Usage) -> Usage:
        cost = (
            None
            if self.cost_usd is None and other.cost_usd is None
            else (self.cost_usd or 0.0) + (other.cost_usd or 0.0)
        )
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_creation_input_tokens=self.cache_creation_input_tokens
            + other.cache_creation_input_tokens,
            cache_read_input_tokens=self.cache_read_input_tokens + other.cache_read_input_tokens,
            cost_usd=cost,
        )


class RunResult(_Entry):
    """The end of one agent turn sequence (Claude Code's ``result`` message).

    ``is_error`` together with ``api_error_status`` and ``terminal_reason`` tells an API
    failure apart from a normal stop; the subtype alone does not.
    """

    kind: Literal["result"] = "result"
    is_error: bool = False
    subtype: str | None = None
    api_error_status: int | None = None
    terminal_reason: str | None = None
    num_turns: int | None = None
    duration_ms: int | None = None
    usage: Usage = Field(default_factory=Usage)
    text: str | None = None


class TurnUsage(_Entry):
    """Tokens one model response used (one API message; its blocks share ``message_id``).

    A response is reported more than once: with each of its content blocks, as far as it had
    streamed then (Claude Code repeats the usage of the response's start, so the output count
    there is not the response's), and once more with ``final`` set when the response has
    ended and its usage is complete (from the ``message_delta`` event of partial messages).
    """

    kind: Literal["usage"] = "usage"
    message_id: str | None = None
    usage: Usage = Field(default_factory=Usage)
    final: bool = False


Entry = Annotated[
    SessionStart
    | UserText
    | AssistantText
    | ToolCall
    | ToolResult
    | ToolRefused
    | SandboxBlocked
    | Notice
    | StopOverridden
    | TurnUsage
    | RunResult,
    Field(discriminator="kind"),
]
"""Any transcript entry; ``kind`` tells which."""


class Transcript(BaseModel):
    """An ordered list of entries, with lookups the validators need."""

    model_config = ConfigDict(frozen=True)

    entries: tuple[Entry, ...] = ()

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def cwd(self) -> str | None:
        """The working directory the session recorded, if any."""
        for entry in self.entries:
            if isinstance(entry, SessionStart) and entry.cwd:
                return entry.cwd
        return None

    @property
    def session_id(self) -> str | None:
        """The latest session id the agent runtime reported (a resumed session keeps its id)."""
        for entry in reversed(self.entries):
            if isinstance(entry, SessionStart) and entry.session_id:
                return entry.session_id
        return None

    @property
    def final_message(self) -> str | None:
        """The run's last word: the text of the last result that has one, else the last
        assistant text, else None. Half a surrogate pair in it (a transcript's JSON may
        escape one) is U+FFFD: the report that carries it must still encode as UTF-8."""
        for entry in reversed(self.entries):
            if isinstance(entry, RunResult) and entry.text:
                return well_formed(entry.text)
        for entry in reversed(self.entries):
            if isinstance(entry, AssistantText) and entry.text:
                return well_formed(entry.text)
        return None

    @property
    def stop_overrides(self) -> int:
        """How often the runtime ended a turn against a blocking Stop hook."""
        return sum(1 for entry in self.entries if isinstance(entry, StopOverridden))

    def refused_calls(self) -> set[str]:
        """The ids of the tool calls refused before they ran."""
        return {e.tool_use_id for e in self.entries if isinstance(e, ToolRefused)}

    def results_by_call(self) -> dict[str, ToolResult]:
        """Each tool call id mapped to its result (the last one, if repeated)."""
        return {e.tool_use_id: e for e in self.entries if isinstance(e, ToolResult)}

    def responses(self) -> list[ModelResponse]:
        """Every model response, once, in the order they started, with its best-known usage.

        A response's usage is its ``final`` report when there is one; without one (a saved
        session log, a runtime that streams no partial messages) it is, count by count, the
        largest any of its reports gave, and ``exact`` is False.
        """
        found: dict[object, ModelResponse] = {}
        for position, entry in enumerate(self.entries):
            if not isinstance(entry, TurnUsage):
                continue
            key: object = entry.message_id if entry.message_id is not None else position
            seen = found.get(key)
            if seen is None:
                found[key] = ModelResponse(
                    position=position,
                    message_id=entry.message_id,
                    usage=entry.usage,
                    exact=entry.final,
                )
            elif entry.final:
                found[key] = seen.model_copy(update={"usage": entry.usage, "exact": True})
            elif not seen.exact:
                found[key] = seen.model_copy(update={"usage": _larger(seen.usage, entry.usage)})
        return list(found.values())

    def result_usage(self) -> Usage:
        """Tokens and cost as the agent runtime's results count them: summed over every
        :class:`RunResult` (one per agent session or turn)."""
        total = Usage()
        for entry in self.entries:
            if isinstance(entry, RunResult):
                total = total + entry.usage
        return total


class ModelResponse(BaseModel):
    """One model response of a transcript (see :meth:`Transcript.responses`)."""

    model_config = ConfigDict(frozen=True)

    position: int
    """The entry at which the response was first reported: where it started."""
    message_id: str | None
    usage: Usage
    exact: bool
    """True when the usage is the response's final count."""


def _larger(one: Usage, other: Usage) -> Usage:
    return Usage(**{name: max(getattr(one, name), getattr(other, name)) for name in TOKEN_COUNTS})
