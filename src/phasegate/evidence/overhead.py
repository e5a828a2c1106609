"""What the gate adds to the input of a run's model requests, part by part (phase, stage).

Every model request carries the whole conversation so far, the system prompt and the tool
definitions. Of that input, two things are the gate's own: the definitions of its completion
tools (``phase_complete``, ``submit_summary``), sent with every request of a run that offers
them, and the text phasegate wrote (the phased prompt's scaffolding around the task's own
words, the gate's feedback, its completion tools' answers, stage and resume prompts), which
stays in the conversation and so is carried again by every later request of the session.

The rule, in one place (``docs/events.md`` says the same):

* **Requests.** Each model response of the transcript (:meth:`Transcript.responses`) is one
  request. It belongs to the part that owns the entry where it started, as its tokens do
  (:mod:`phasegate.evidence.usage_split`), so the parts' overheads plus the unattributed one
  are the run's, figure by figure.
* **Input carried** is exact: the request's input, cache-write and cache-read tokens as the
  API counted them.
* **Tool definitions**: the characters of the gate's tool definitions, once per request.
* **Gate text**: the characters of the gate's text sent in the request's session before the
  request, once per request. A new session (another ``session_id``) starts from what was sent
  to open it; a resumed session keeps its id, and its context. Compaction is not modelled:
  after Claude Code compacts a long conversation the figure is an upper bound.
* **Tokens** are estimated from characters: :data:`CHARACTERS_PER_TOKEN` characters per token,
  rounded up, per request. The model's tokenizer decides the real count; the estimate shows
  the order of magnitude, which is what the gate's share of the input needs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from phasegate.evidence.transcript import SessionStart, Transcript, Usage

CHARACTERS_PER_TOKEN = 4
"""The estimate's rate: characters of English prose, Markdown or JSON per token."""


class GateOverhead(BaseModel):
    """The input a phase's (or run's) model requests carried, and the gate's share of it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    requests: int = 0
    """Model requests (one per model response)."""
    input_tokens: int = Field(
        default=0,
        description="Input the requests carried, as the API counted it: input, cache-write "
        "and cache-read tokens.",
    )
    tool_characters: int = Field(
        default=0,
        description="Characters of the gate's completion-tool definitions, once per request.",
    )
    text_characters: int = Field(
        default=0,
        description="Characters of the text phasegate wrote (prompt scaffolding, feedback, "
        "completion-tool answers) in each request's conversation, summed over the requests.",
    )
    tool_tokens: int = Field(
        default=0, description="tool_characters in tokens, estimated per request."
    )
    text_tokens: int = Field(
        default=0, description="text_characters in tokens, estimated per request."
    )

    @property
    def gate_tokens(self) -> int:
        """The gate's share of the input, in estimated tokens: tool definitions and text."""
        return self.tool_tokens + self.text_tokens

    @property
    def is_zero(self) -> bool:
        """No request counted."""
        return self.requests == 0

    def __add__(self, other: GateOverhead) -> GateOverhead:
        return GateOverhead(
            **{name: getattr(self, name) + getattr(other, name) for name in _FIGURES}
        )

    def __sub__(self, other: GateOverhead) -> GateOverhead:
        return GateOverhead(
            **{name: getattr(self, name) - getattr(other, name) for name in _FIGURES}
        )


_FIGURES = tuple(GateOverhead.model_fields)


@dataclass(frozen=True, slots=True)
class OverheadSplit:
    """A run's overhead, split: ``parts`` plus ``unattributed`` is ``total``."""

    parts: tuple[GateOverhead, ...]
    unattributed: GateOverhead
    """Requests no part owns (in unstructured mode, every request)."""
    total: GateOverhead


def estimated_tokens(characters: int) -> int:
    """``characters`` in tokens, at :data:`CHARACTERS_PER_TOKEN`, rounded up."""
    return -(-characters // CHARACTERS_PER_TOKEN)


def split_overhead(
    transcript: Transcript,
    owner: Callable[[int], int | None],
    parts: int,
    *,
    gate_text: Mapping[int, int],
    tool_characters: int,
) -> OverheadSplit:
    """The overhead of ``transcript``'s requests among ``parts`` parts.

    ``owner(position)`` names the part (0-based) owning the entry at ``position``, as for
    :func:`~phasegate.evidence.usage_split.split_usage`; ``gate_text`` maps the position of
    each entry phasegate wrote (a prompt, a completion tool's answer) to how many of its
    characters are the gate's; ``tool_characters`` is what the gate's tool definitions take
    in each request (0 when the run offers none).
    """
    starts = {response.position: response.usage for response in transcript.responses()}
    owned = [GateOverhead() for _ in range(parts)]
    unowned = GateOverhead()
    session: str | None = None
    in_context = 0  # the gate's characters the current session's requests carry
    unsent = 0  # written since the last request: the next request carries it
    for position, entry in enumerate(transcript.entries):
        if isinstance(entry, SessionStart) and entry.session_id:
            if session is not None and entry.session_id != session:
                in_context = 0  # another conversation: only what opened it
            session = entry.session_id
        unsent += gate_text.get(position, 0)
        usage = starts.get(position)
        if usage is None:
            continue
        in_context, unsent = in_context + unsent, 0
        request = _request(usage, tool_characters, in_context)
        part = owner(position)
        if part is not None and 0 <= part < parts:
            owned[part] = owned[part] + request
        else:
            unowned = unowned + request
    total = sum(owned, unowned)
    return OverheadSplit(parts=tuple(owned), unattributed=unowned, total=total)


def _request(usage: Usage, tool_characters: int, text_characters: int) -> GateOverhead:
    return GateOverhead(
        requests=1,
        input_tokens=usage.input_tokens
        + usage.cache_creation_input_tokens
        + usage.cache_read_input_tokens,
        tool_characters=tool_characters,
        text_characters=text_characters,
        tool_tokens=estimated_tokens(tool_characters),
        text_tokens=estimated_tokens(text_characters),
    )
