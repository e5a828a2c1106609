"""How the agent claims a phase complete: a marker it types, or a tool it calls.

Three ways exist, and a task chooses which count (``Task.completion``):

* ``marker``: a ``PHASE N COMPLETE: ...`` line of assistant text (:mod:`phasegate.phases.markers`);
  the output phase's JSON is printed as text.
* ``tool``: a call of ``phase_complete(phase, note)``; the output phase's JSON is the
  ``summary`` argument of ``submit_summary(summary)``. Typed markers and printed JSON do not
  count.
* ``either`` (the default): both.

The tools come from an in-process MCP server named ``phasegate``, so Claude Code sees them as
``mcp__phasegate__phase_complete`` and ``mcp__phasegate__submit_summary``. Independently of the
mode, an output phase with ``structured_output`` may be answered through the runtime's own
``StructuredOutput`` tool (Claude Code's schema-constrained output).
"""

from __future__ import annotations

from typing import Literal

Completion = Literal["marker", "tool", "either"]
"""How the agent says a phase is complete (see the module docstring)."""

TOOL_SERVER = "phasegate"
"""The MCP server name the completion tools live under."""
PHASE_COMPLETE = "phase_complete"
SUBMIT_SUMMARY = "submit_summary"
PHASE_COMPLETE_TOOL = f"mcp__{TOOL_SERVER}__{PHASE_COMPLETE}"
"""The full tool name the model calls to complete a work phase."""
SUBMIT_SUMMARY_TOOL = f"mcp__{TOOL_SERVER}__{SUBMIT_SUMMARY}"
"""The full tool name the model calls to hand in the output phase's JSON."""
STRUCTURED_OUTPUT_TOOL = "StructuredOutput"
"""Claude Code's tool for schema-constrained output (``output_format``)."""
_FULL_NAMES = {PHASE_COMPLETE: PHASE_COMPLETE_TOOL, SUBMIT_SUMMARY: SUBMIT_SUMMARY_TOOL}
COMPLETION_TOOLS = frozenset(_FULL_NAMES.values())


def counts_markers(completion: Completion) -> bool:
    """Whether typed markers (and printed JSON) complete phases in this mode."""
    return completion != "tool"


def counts_tools(completion: Completion) -> bool:
    """Whether the completion tools are offered and their calls complete phases."""
    return completion != "marker"


ClaimWay = Literal["tool", "marker"]
SummaryWay = Literal["structured_output", "submit_summary", "text"]


def claim_ways(completion: Completion) -> tuple[ClaimWay, ...]:
    """The ways a work phase can be claimed complete in this mode, tools first."""
    ways: tuple[ClaimWay, ...] = ("tool",) if counts_tools(completion) else ()
    return ways + (("marker",) if counts_markers(completion) else ())


def summary_ways(completion: Completion, *, structured_output: bool) -> tuple[SummaryWay, ...]:
    """The ways the output phase's JSON can be given: its runtime's structured output (when
    the phase asks for it), then ``submit_summary``, then printed text, as the mode allows."""
    ways: tuple[SummaryWay, ...] = ("structured_output",) if structured_output else ()
    ways += ("submit_summary",) if counts_tools(completion) else ()
    return ways + (("text",) if counts_markers(completion) else ())


def full_tool_name(name: str) -> str:
    """``phase_complete`` → ``mcp__phasegate__phase_complete``; other names unchanged."""
    return _FULL_NAMES.get(name, name)
