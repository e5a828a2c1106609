"""The normalized transcript: the ordered record of what happened in a run.

Every agent adapter, and the parser of saved Claude Code transcripts, produces the same
entries, so validators judge one shape whatever ran the agent. Where an entry came from
matters: only :class:`AssistantText` can carry a marker or the output JSON; a
:class:`ToolResult` is the tool's own word on success; :class:`UserText` is what the agent
was told (prompts, feedback) and never counts as evidence.
"""

from __future__ import annotations

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


class ToolCall(_Entry):
    """The model asked for a tool: ``id`` links it to its :class:`ToolResult`."""

    kind: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)


class ToolResult(_Entry):
    """What running a tool gave back. ``ok`` is False for an error result."""

    kind: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    ok: bool
    content: str = ""


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


class Usage(BaseModel):
    """Tokens and cost, where the agent reports them."""

    model_config = ConfigDict(frozen=True)

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cost_usd: float | None = None

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
    """Tokens one model response used (one API message; its blocks share ``message_id``)."""

    kind: Literal["usage"] = "usage"
    message_id: str | None = None
    usage: Usage = Field(default_factory=Usage)


Entry = Annotated[
    SessionStart
    | UserText
    | AssistantText
    | ToolCall
    | ToolResult
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

    def results_by_call(self) -> dict[str, ToolResult]:
        """Each tool call id mapped to its result (the last one, if repeated)."""
        return {e.tool_use_id: e for e in self.entries if isinstance(e, ToolResult)}

    def turn_usage(self, start: int = 0, end: int | None = None) -> Usage:
        """Tokens of the model responses in entries ``[start, end)``, each message once."""
        total, seen = Usage(), set()
        for entry in self.entries[start:end]:
            if isinstance(entry, TurnUsage) and (
                entry.message_id is None or entry.message_id not in seen
            ):
                seen.add(entry.message_id)
                total = total + entry.usage
        return total

    def usage(self) -> Usage:
        """Tokens and cost summed over every :class:`RunResult`."""
        total = Usage()
        for entry in self.entries:
            if isinstance(entry, RunResult):
                total = total + entry.usage
        return total
