"""Which tool calls a phase allows: decided before a call runs, and checked again afterwards.

A task's phases run in order, and the *current phase* is the first one whose completion has
not been claimed: a work phase is claimed by its marker line (printed in assistant text, in a
mode that counts markers) or by a ``phase_complete`` call the gate accepted (its result came
back ``ok``); when every work phase is claimed, the output phase is current. A marker printed
earlier in the same reply as a call counts: the reply's text is recorded before its calls.

While a phase is current, only the tools in its ``allow_tools`` may run (every tool when it
has none), and ``submit_summary`` waits until every work phase is claimed. phasegate's
``phase_complete`` is always allowed: it is how a phase ends.

:func:`tool_refusal` answers for one call about to run (the agent refuses it; the refusal is
evidence, not an issue); :func:`policy_issues` finds the calls that ran although the policy
forbade them (a saved transcript, where nothing could be refused, or a runtime that did not
ask), as issues with the code ``tool_not_allowed``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from phasegate.evidence.transcript import AssistantText, Entry, ToolCall, ToolRefused, ToolResult
from phasegate.phases.completion import (
    PHASE_COMPLETE_TOOL,
    SUBMIT_SUMMARY_TOOL,
    counts_markers,
    counts_tools,
)
from phasegate.phases.model import Task
from phasegate.validators.issues import Issue, IssueCode
from phasegate.validators.protect import WRITE_TOOL_PATHS
from phasegate.validators.windows import tool_claim, work_markers

RefusalKind = Literal["not_allowed", "summary_too_early"]
"""Why a call is refused: its tool is not in the current phase's ``allow_tools``, or it hands
in the summary while a work phase is still unclaimed."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Refusal:
    """A call the policy does not let run."""

    kind: RefusalKind
    tool: str
    phase: int
    """The current phase (1-based) when the call was made."""
    allowed: tuple[str, ...] | None
    """The current phase's ``allow_tools`` (None: every tool)."""


def has_tool_policy(task: Task) -> bool:
    """Whether any call of ``task`` can be refused: a phase with ``allow_tools``, or an output
    phase reached through ``submit_summary`` after work phases."""
    return any(phase.allow_tools is not None for phase in task.phases) or (
        counts_tools(task.completion) and task.output_phase is not None and bool(task.work_phases)
    )


def guarded_tools(task: Task) -> tuple[str, ...] | None:
    """The tools whose calls must be asked about before they run: None for every tool (a
    phase restricts them), ``()`` for none, else the names (``submit_summary``, and the
    file-writing tools when the task protects paths or asks for a sandbox)."""
    if any(phase.allow_tools is not None for phase in task.phases):
        return None
    named = (SUBMIT_SUMMARY_TOOL,) if has_tool_policy(task) else ()
    confined = task.sandbox is not None and task.sandbox.confined
    return named + (tuple(WRITE_TOOL_PATHS) if task.protect or confined else ())


def current_phase(task: Task, entries: Sequence[Entry]) -> int:
    """The 1-based index of the current phase after ``entries`` (see the module docstring)."""
    claimed = _claimed(task, entries)
    for number, phase in enumerate(task.phases, start=1):
        if phase.is_output or number not in claimed:
            return number
    return len(task.phases)  # every phase is a claimed work phase: the last stays current


def tool_refusal(task: Task, entries: Sequence[Entry], name: str) -> Refusal | None:
    """Why the call of ``name`` that follows ``entries`` must not run, or None (the policy is
    per tool; a write to a protected path is :func:`phasegate.validators.protect.write_refusal`'s
    to refuse)."""
    if name == PHASE_COMPLETE_TOOL:
        return None
    number = current_phase(task, entries)
    phase = task.phases[number - 1]
    if name == SUBMIT_SUMMARY_TOOL:
        if phase.is_output:
            return None
        return Refusal(kind="summary_too_early", tool=name, phase=number, allowed=phase.allow_tools)
    if phase.allow_tools is None or name in phase.allow_tools:
        return None
    return Refusal(kind="not_allowed", tool=name, phase=number, allowed=phase.allow_tools)


def policy_issues(task: Task, entries: Sequence[Entry]) -> list[Issue]:
    """A ``tool_not_allowed`` issue for each call that ran although its phase did not allow
    it (a refused call did not run, and is no issue)."""
    if not any(phase.allow_tools is not None for phase in task.phases):
        return []
    refused = {e.tool_use_id for e in entries if isinstance(e, ToolRefused)}
    issues = []
    for position, entry in enumerate(entries):
        if not isinstance(entry, ToolCall) or entry.id in refused:
            continue
        refusal = tool_refusal(task, entries[:position], entry.name)
        if refusal is None or refusal.kind != "not_allowed":
            continue
        phase = task.phases[refusal.phase - 1]
        allowed = ", ".join(refusal.allowed or ()) or "no tool but phasegate's"
        issues.append(
            Issue.of(
                IssueCode.TOOL_NOT_ALLOWED,
                f"Phase {refusal.phase} ({phase.name}) allows {allowed}, but {entry.name} was "
                "called while it was the current phase.",
                phase=refusal.phase,
                field="tools",
                provided=entry.name,
                requirement=f"only {allowed} until phase {refusal.phase} is complete",
            )
        )
    return issues


def _claimed(task: Task, entries: Sequence[Entry]) -> set[int]:
    """The work phases claimed complete in ``entries``: markers printed, accepted calls."""
    claimed: set[int] = set()
    markers, tools = counts_markers(task.completion), counts_tools(task.completion)
    accepted = (
        {e.tool_use_id for e in entries if isinstance(e, ToolResult) and e.ok} if tools else set()
    )
    for position, entry in enumerate(entries):
        if markers and isinstance(entry, AssistantText):
            claimed.update(marker.index for marker in work_markers(task, entry.text))
        elif tools and isinstance(entry, ToolCall) and entry.id in accepted:
            claim = tool_claim(task, entry, position)
            if claim is not None:
                claimed.add(claim.index)
    return claimed
