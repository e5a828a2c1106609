"""Tool-call evidence: which calls happened where, and which of them succeeded.

A call counts as successful only when the runtime's own tool result for it says so; a call
without a result (the session ended first) is not a success. A call refused before it ran (a
:class:`~phasegate.evidence.transcript.ToolRefused` entry) is no call at all: it neither used
its tool nor failed it.
"""

from __future__ import annotations

from dataclasses import dataclass

from phasegate.evidence.transcript import ToolCall, ToolResult, Transcript
from phasegate.phases.model import Phase

MUTATING_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
"""Tools whose purpose is to change files; ``require_changes`` counts them as the phase's work."""


@dataclass(frozen=True, slots=True)
class CallRecord:
    """A tool call at transcript ``position`` and its result, if one arrived."""

    position: int
    call: ToolCall
    result: ToolResult | None

    @property
    def ok(self) -> bool:
        """True when the tool reported success."""
        return self.result is not None and self.result.ok


def tool_calls(transcript: Transcript) -> list[CallRecord]:
    """Every tool call that was let run, in order, linked to its result by id."""
    results, refused = transcript.results_by_call(), transcript.refused_calls()
    return [
        CallRecord(position, entry, results.get(entry.id))
        for position, entry in enumerate(transcript.entries)
        if isinstance(entry, ToolCall) and entry.id not in refused
    ]


def is_required_work(phase: Phase, call: ToolCall) -> bool:
    """Whether ``call`` is the kind of work ``phase`` requires."""
    return call.name in phase.require_tools or (
        phase.require_changes and call.name in MUTATING_TOOLS
    )
