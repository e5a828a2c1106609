"""Cutting a transcript into phase windows.

Each work phase owns the entries from the end of the previous phase up to and including its
counted marker: the *last* marker with its number that comes after the previous phase ended
(so a marker re-printed after feedback replaces a premature one). A work phase without such a
marker extends to the next later-phase marker, or to the end. The output phase owns what
follows the last work phase.

Without markers (the unstructured baseline, where the prompt never asked for them) every
phase's window is the whole transcript.
"""

from __future__ import annotations

from dataclasses import dataclass

from phasegate.evidence.transcript import AssistantText, Transcript
from phasegate.phases.markers import MarkerMatch, find_markers
from phasegate.phases.model import Phase, Task


@dataclass(frozen=True, slots=True, kw_only=True)
class PhaseWindow:
    """The transcript entries ``[start, end)`` that belong to one phase."""

    phase: Phase
    index: int
    start: int
    end: int
    marker_at: int | None = None
    """Entry index of the counted marker (work phases with a marker only)."""
    marker: MarkerMatch | None = None
    head: tuple[int, int] | None = None
    """(entry, line) of the previous phase's marker: the lines after it, in that same text
    block, belong to this window too (a model often prints a marker and the JSON together)."""

    def __contains__(self, position: object) -> bool:
        return isinstance(position, int) and self.start <= position < self.end


def work_markers(task: Task, text: str) -> list[MarkerMatch]:
    """The markers in one block of assistant text that name a work phase of ``task``."""
    work = {task.index_of(phase) for phase in task.work_phases}
    return [marker for marker in find_markers(text) if marker.index in work]


def find_marker_entries(task: Task, transcript: Transcript) -> list[tuple[int, MarkerMatch]]:
    """(entry index, marker) for every marker of a work phase, in transcript order."""
    found: list[tuple[int, MarkerMatch]] = []
    for position, entry in enumerate(transcript.entries):
        if isinstance(entry, AssistantText):
            found.extend((position, marker) for marker in work_markers(task, entry.text))
    return found


def phase_windows(task: Task, transcript: Transcript, *, markers: bool = True) -> list[PhaseWindow]:
    """One window per phase of ``task``, in phase order."""
    length = len(transcript)
    if not markers:
        return [
            PhaseWindow(phase=p, index=task.index_of(p), start=0, end=length) for p in task.phases
        ]
    found = find_marker_entries(task, transcript)
    windows: list[PhaseWindow] = []
    start = 0
    after = (-1, -1)  # (entry, line) of the previous counted marker: order within one entry too
    for phase in task.work_phases:
        index = task.index_of(phase)
        own = [(pos, m) for pos, m in found if m.index == index and (pos, m.line) > after]
        if own:
            position, match = own[-1]
            end = max(start, position + 1)
            windows.append(
                PhaseWindow(
                    phase=phase,
                    index=index,
                    start=start,
                    end=end,
                    marker_at=position,
                    marker=match,
                )
            )
            start, after = end, (position, match.line)
        else:
            later = [pos for pos, m in found if m.index > index and (pos, m.line) > after]
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
                head=after if after[0] >= 0 else None,
            )
        )
    return windows
