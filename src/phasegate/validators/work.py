"""Rules for work phases: the marker, the required tools, the changes on disk, and order.

Each rule is a small pure function returning a list of issues (empty when the rule holds).
"""

from __future__ import annotations

from collections.abc import Sequence

from phasegate.evidence.workspace import WorkspaceDiff
from phasegate.phases.completion import (
    COMPLETION_TOOLS,
    PHASE_COMPLETE,
    STRUCTURED_OUTPUT_TOOL,
    Completion,
    claim_ways,
)
from phasegate.phases.markers import marker_line
from phasegate.validators.issues import Issue, IssueCode
from phasegate.validators.paths import READ_TOOLS, touches_only_own_files
from phasegate.validators.tools import CallRecord, is_required_work
from phasegate.validators.windows import PhaseWindow

PLAN_MODE_TOOLS = frozenset({"ExitPlanMode"})
"""Claude Code's plan-mode tools that change nothing themselves: the model hands in its plan
(Claude Code runs read-only phases in plan mode)."""
_MAY_READ = READ_TOOLS | COMPLETION_TOOLS | PLAN_MODE_TOOLS | {STRUCTURED_OUTPUT_TOOL}
"""What a read-only task may call: tools that read, plan mode's, and the ways of answering;
and any tool on Claude Code's own files only (writing its plan)."""


def check_marker(window: PhaseWindow, completion: Completion = "marker") -> list[Issue]:
    """``marker_missing``: the phase was not claimed complete after the previous phase (no
    marker line, or no ``phase_complete`` call, as the completion mode counts them)."""
    if window.marker_at is not None:
        return []
    expected = marker_line(window.index, window.phase.marker)
    call = f"{PHASE_COMPLETE}(phase={window.index})"
    seen = {"tool": f"{call} call", "marker": f"line '{expected}' in the assistant's text"}
    do = {"tool": f"call {call} with a one-line note", "marker": f"print the line: {expected}"}
    ways = [seen[way] for way in claim_ways(completion)]
    todo = [do[way] for way in claim_ways(completion)]
    missing = f"neither a {ways[0]} nor a {ways[1]}" if len(ways) == 2 else f"no {ways[0]}"
    return [
        Issue.of(
            IssueCode.MARKER_MISSING,
            f"Phase {window.index} ({window.phase.name}) was never marked complete: "
            f"{missing} after the previous phase.",
            phase=window.index,
            field="marker",
            requirement=f"When the phase's work is done, {' or '.join(todo)}",
        )
    ]


def find_late_work(windows: Sequence[PhaseWindow], calls: Sequence[CallRecord]) -> dict[int, int]:
    """Phases whose required work came after their own marker: phase index → call position.

    A successful call after a phase's marker is that phase's late work unless a later phase
    that requires the same kind of work owns it (its window holds the call).
    """
    late: dict[int, int] = {}
    for record in calls:
        if not record.ok:
            continue
        owner = next((w for w in windows if record.position in w), None)
        if owner is not None and is_required_work(owner.phase, record.call):
            continue
        earlier = [
            w
            for w in windows
            if w.marker_at is not None
            and w.marker_at < record.position
            and is_required_work(w.phase, record.call)
        ]
        if earlier:
            late.setdefault(earlier[-1].index, record.position)
    return late


def check_order(
    window: PhaseWindow, late_position: int | None, calls: Sequence[CallRecord]
) -> list[Issue]:
    """``marker_before_work``: the phase's marker came before work the phase required."""
    if late_position is None:
        return []
    call = next(r.call for r in calls if r.position == late_position)
    return [
        Issue.of(
            IssueCode.MARKER_BEFORE_WORK,
            f"Phase {window.index} ({window.phase.name}) was marked complete before its work: "
            f"a successful {call.name} call came after the completion.",
            phase=window.index,
            field="marker",
            provided=f"{call.name} after the completion",
            requirement=(
                f"Finish all of phase {window.index}'s work first, then mark phase "
                f"{window.index} complete again."
            ),
        )
    ]


def check_required_tools(window: PhaseWindow, calls: Sequence[CallRecord]) -> list[Issue]:
    """``tool_not_used`` / ``tool_failed``: no successful call of a required tool in the phase."""
    required = window.phase.require_tools
    if not required:
        return []
    mine = [r for r in calls if r.position in window and r.call.name in required]
    if any(r.ok for r in mine):
        return []
    names = " or ".join(required)
    requirement = f"Use {names} successfully during phase {window.index}."
    if mine:
        errors = "; ".join(_result_excerpt(r) for r in mine[-3:])
        return [
            Issue.of(
                IssueCode.TOOL_FAILED,
                f"Phase {window.index} ({window.phase.name}): every call of {names} failed "
                f"({len(mine)} call(s)).",
                phase=window.index,
                field="tools",
                provided=errors,
                requirement=requirement,
            )
        ]
    return [
        Issue.of(
            IssueCode.TOOL_NOT_USED,
            f"Phase {window.index} ({window.phase.name}) requires {names}, "
            "but no such tool was called in it.",
            phase=window.index,
            field="tools",
            requirement=requirement,
        )
    ]


def check_changes(window: PhaseWindow, diff: WorkspaceDiff) -> list[Issue]:
    """``no_changes``: the phase requires changes on disk and none happened during it."""
    if not window.phase.require_changes or diff:
        return []
    return [
        Issue.of(
            IssueCode.NO_CHANGES,
            f"Phase {window.index} ({window.phase.name}) requires file changes, "
            "but no file in the work directory changed during it.",
            phase=window.index,
            field="files",
            requirement="Change the files on disk with your editing tools; describing a change "
            "does not make it.",
        )
    ]


def check_read_only(
    window: PhaseWindow, diff: WorkspaceDiff, calls: Sequence[CallRecord], *, read_only: bool
) -> list[Issue]:
    """``read_only_violated``: the task may only read, yet the phase called a tool that is
    not a reading tool (even one the runtime refused) or files changed on disk."""
    if not read_only:
        return []
    tried = sorted(
        {
            r.call.name
            for r in calls
            if r.position in window
            and r.call.name not in _MAY_READ
            and not touches_only_own_files(r.call)
        }
    )
    found: list[str] = []
    if tried:
        found.append(f"it called {', '.join(tried)}")
    if diff:
        found.append(f"files changed on disk: {', '.join(diff.paths)}")
    if not found:
        return []
    return [
        Issue.of(
            IssueCode.READ_ONLY_VIOLATED,
            f"Phase {window.index} ({window.phase.name}) belongs to a read-only task, but "
            + "; ".join(found)
            + ".",
            phase=window.index,
            field="tools" if tried else "files",
            provided=", ".join([*tried, *diff.paths]),
            requirement="Only read the project (Read, Grep, Glob): change nothing, run nothing.",
        )
    ]


def _result_excerpt(record: CallRecord) -> str:
    if record.result is None:
        return f"{record.call.name}: no result"
    first_line = (
        record.result.content.strip().splitlines()[0] if record.result.content.strip() else ""
    )
    return f"{record.call.name}: {first_line[:120] or 'error'}"
