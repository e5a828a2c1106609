"""Cutting a transcript into phase windows.

A *completion claim* says "phase N is complete": a marker line in assistant text, or a
``phase_complete`` tool call, whichever the task's ``completion`` mode counts. Each work
phase owns the entries from the end of the previous phase up to and including its counted
claim: the *last* claim with its number that comes after the previous phase ended (so a claim
repeated after feedback replaces a premature one). A work phase without such a claim extends
to the next later-phase claim, or to the end. The output phase owns what follows the last work
phase.

Without markers (the unstructured baseline, where the prompt never asked for them) every
phase's window is the whole transcript.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from phasegate.evidence.transcript import AssistantText, Entry, ToolCall, Transcript
from phasegate.phases.completion import PHASE_COMPLETE_TOOL, counts_markers, counts_tools
from phasegate.phases.markers import MarkerMatch, find_markers
from phasegate.phases.model import Phase, Task


@dataclass(frozen=True, slots=True, kw_only=True)
class CompletionClaim:
    """The agent said phase ``index`` is complete, at transcript entry ``position``."""

    position: int
    index: int
    line: int
    """The line of the text block the marker stood on (0 for a tool call)."""
    source: Literal["marker", "tool"]
    text: str
    """The marker's text after ``COMPLETE:``, or the tool call's ``note``."""

    @property
    def order(self) -> tuple[int, int]:
        """Where the claim stands: entry, then line within the entry."""
        return (self.position, self.line)


@dataclass(frozen=True, slots=True, kw_only=True)
class PhaseWindow:
    """The transcript entries ``[start, end)`` that belong to one phase."""

    phase: Phase
    index: int
    start: int
    end: int
    marker: CompletionClaim | None = None
    """The counted completion claim (a marker line or a ``phase_complete`` call)."""
    head: tuple[int, int] | None = None
    """(entry, line) of the previous phase's marker line: the lines after it, in that same text
    block, belong to this window too (a model often prints a marker and the JSON together)."""

    @property
    def marker_at(self) -> int | None:
        """Entry index of the counted completion claim (work phases with a claim only)."""
        return self.marker.position if self.marker is not None else None

    def __contains__(self, position: object) -> bool:
        return isinstance(position, int) and self.start <= position < self.end


def work_markers(task: Task, text: str) -> list[MarkerMatch]:
    """The markers in one block of assistant text that name a work phase of ``task``."""
    found = find_markers(text)
    if not found:
        return found  # the common case: no need to number the task's phases
    work = {task.index_of(phase) for phase in task.work_phases}
    return [marker for marker in found if marker.index in work]


def work_phase_number(task: Task, value: object) -> int | None:
    """The work phase of ``task`` a completion call names: an int, or a string of digits
    (models sometimes quote numbers). None for anything else, bools and the output phase
    included; never raises."""
    if isinstance(value, str) and value.strip().isdecimal():  # not isdigit: int("²") raises
        try:
            value = int(value)
        except ValueError:  # more digits than int() converts (sys.get_int_max_str_digits)
            return None
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    if not 1 <= value <= len(task.phases) or task.phases[value - 1].is_output:
        return None
    return value


def tool_claim(task: Task, call: ToolCall, position: int) -> CompletionClaim | None:
    """The claim a ``phase_complete`` call makes, if it names a work phase of ``task``."""
    if call.name != PHASE_COMPLETE_TOOL:
        return None
    index = work_phase_number(task, call.input.get("phase"))
    if index is None:
        return None
    note = call.input.get("note")
    return CompletionClaim(
        position=position,
        index=index,
        line=0,
        source="tool",
        text=note.strip() if isinstance(note, str) else "",
    )


def entry_claims(task: Task, entry: Entry, position: int) -> list[CompletionClaim]:
    """The completion claims one transcript entry makes, as the task's mode counts them."""
    if isinstance(entry, AssistantText) and counts_markers(task.completion):
        return [
            CompletionClaim(
                position=position, index=m.index, line=m.line, source="marker", text=m.text
            )
            for m in work_markers(task, entry.text)
        ]
    if isinstance(entry, ToolCall) and counts_tools(task.completion):
        claim = tool_claim(task, entry, position)
        return [claim] if claim is not None else []
    return []


def find_claims(task: Task, transcript: Transcript) -> list[CompletionClaim]:
    """Every completion claim for a work phase that the task's mode counts, in order."""
    return [
        claim
        for position, entry in enumerate(transcript.entries)
        for claim in entry_claims(task, entry, position)
    ]


def phase_windows(task: Task, transcript: Transcript, *, markers: bool = True) -> list[PhaseWindow]:
    """One window per phase of ``task``, in phase order."""
    length = len(transcript)
    if not markers:
        return [
            PhaseWindow(phase=p, index=task.index_of(p), start=0, end=length) for p in task.phases
        ]
    found = find_claims(task, transcript)
    windows: list[PhaseWindow] = []
    start = 0
    previous: CompletionClaim | None = None
    after = (-1, -1)  # order of the previous counted claim: order within one entry too
    for phase in task.work_phases:
        index = task.index_of(phase)
        own = [c for c in found if c.index == index and c.order > after]
        if own:
            claim = own[-1]
            end = max(start, claim.position + 1)
            windows.append(
                PhaseWindow(
                    phase=phase,
                    index=index,
                    start=start,
                    end=end,
                    marker=claim,
                )
            )
            start, after, previous = end, claim.order, claim
        else:
            later = [c.position for c in found if c.index > index and c.order > after]
            end = max(start, later[0]) if later else length
            windows.append(PhaseWindow(phase=phase, index=index, start=start, end=end))
            start = end
    if task.output_phase is not None:
        output = task.output_phase
        windows.append(
            PhaseWindow(
                phase=output,
                index=task.index_of(output),
                start=start,
                end=length,
                head=previous.order
                if previous is not None and previous.source == "marker"
                else None,
            )
        )
    return windows
