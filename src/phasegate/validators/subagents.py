"""Who did the work: the one place that counts a run's tool calls per subagent.

A subagent's tool calls, errors and file changes are the run's work: they count for the phase
(or stage) whose window holds them, like the main agent's. They are also shown apart, per
subagent, so a report says who did what: :func:`subagent_work` turns the calls of a phase (or
a whole run) into one :class:`SubagentWork` per subagent. Who made a call is the
:class:`~phasegate.evidence.transcript.AgentRef` every transcript reader puts on it (None for
the main agent), so live runs and every saved shape are counted by the same rule, and the
figures add up: the main agent's calls plus every subagent's are the phase's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from phasegate.validators.reconcile import tool_reported_paths
from phasegate.validators.tools import CallRecord


class SubagentWork(BaseModel):
    """What one subagent did within a phase, a stage or a run."""

    model_config = ConfigDict(frozen=True)

    agent: str = Field(
        description="The subagent's id (Claude Code's agentId, else the id of "
        "the Agent (Task) call that started it; `sidechain` when none is known)."
    )
    type: str | None = Field(
        default=None, description="Its kind, as the Agent (Task) call asked for it."
    )
    parent: str | None = Field(
        default=None, description="The id of the Agent (Task) tool call that started it."
    )
    tools: dict[str, int] = Field(
        default_factory=dict, description="Its successful calls per tool name."
    )
    tool_errors: int = Field(default=0, description="Its calls whose result was an error.")
    files: list[str] = Field(
        default_factory=list,
        description="Files inside the work directory its successful editing calls named.",
    )

    @property
    def label(self) -> str:
        """How reports name it: its type and id, else its id."""
        return f"{self.type} {self.agent}" if self.type else self.agent

    @property
    def summary(self) -> str:
        """Its work in one line of text: Edit (times 1), Read (times 1), 1 error, its files."""
        parts = [calls_text(self.tools)]
        if self.tool_errors:
            parts.append(f"{self.tool_errors} error(s)")
        if self.files:
            parts.append("files: " + ", ".join(self.files))
        return "; ".join(parts)

    @property
    def calls(self) -> int:
        """Its calls, successful or not."""
        return sum(self.tools.values()) + self.tool_errors


def subagent_work(calls: Iterable[CallRecord], workdir: str) -> list[SubagentWork]:
    """One :class:`SubagentWork` per subagent among ``calls``, in the order each first
    called a tool; the main agent's calls are left out."""
    work: list[SubagentWork] = []
    for record in calls:
        work = with_call(work, record, workdir)
    return work


def with_call(work: Sequence[SubagentWork], record: CallRecord, workdir: str) -> list[SubagentWork]:
    """``work`` with one more call counted for the subagent that made it (a main-agent call
    leaves it as it is): how a run counts its subagents as calls come back, and
    :func:`subagent_work` counts them afterwards."""
    agent = record.call.agent
    if agent is None:
        return list(work)
    one = SubagentWork(
        agent=agent.id,
        type=agent.type,
        parent=agent.parent,
        tools={record.call.name: 1} if record.ok else {},
        tool_errors=0 if record.ok else 1,
        files=tool_reported_paths([record], workdir),
    )
    return merge_work([work, [one]])


def merge_work(parts: Iterable[Sequence[SubagentWork]]) -> list[SubagentWork]:
    """Each subagent's work over several phases (or stages) as one: calls and errors
    summed, files joined; in the order each first appears."""
    merged: dict[str, SubagentWork] = {}
    for part in parts:
        for work in part:
            seen = merged.get(work.agent)
            if seen is None:
                merged[work.agent] = work
                continue
            merged[work.agent] = seen.model_copy(
                update={
                    "type": seen.type or work.type,
                    "parent": seen.parent or work.parent,
                    "tools": dict(Counter(seen.tools) + Counter(work.tools)),
                    "tool_errors": seen.tool_errors + work.tool_errors,
                    "files": sorted({*seen.files, *work.files}),
                }
            )
    return list(merged.values())


def main_agent_calls(tools: dict[str, int], subagents: Sequence[SubagentWork]) -> dict[str, int]:
    """The main agent's successful calls per tool: a phase's less its subagents'."""
    left = Counter(tools)
    for work in subagents:
        left.subtract(work.tools)
    return {name: count for name, count in left.items() if count > 0}


def calls_text(tools: dict[str, int]) -> str:
    """Successful calls per tool as text (name, times sign, count), ``no tools`` for none."""
    return ", ".join(f"{name}×{count}" for name, count in sorted(tools.items())) or "no tools"
