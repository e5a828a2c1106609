"""What the disk says: snapshots of a work directory and the differences between them.

This module is pure: a :class:`WorkspaceSnapshot` is a mapping from relative path to content
hash, and a :class:`WorkspaceTimeline` holds the snapshots taken at transcript positions.
Taking a snapshot from disk is :mod:`phasegate.workspace.observer`'s job.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class WorkspaceSnapshot:
    """Content hash of every observed file, keyed by POSIX path relative to the work dir."""

    files: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkspaceDiff:
    """Paths added, modified and deleted between two snapshots (sorted, relative)."""

    added: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()

    @classmethod
    def between(cls, before: WorkspaceSnapshot, after: WorkspaceSnapshot) -> WorkspaceDiff:
        """The changes that turn ``before`` into ``after``."""
        old, new = before.files, after.files
        return cls(
            added=tuple(sorted(p for p in new if p not in old)),
            modified=tuple(sorted(p for p in new if p in old and old[p] != new[p])),
            deleted=tuple(sorted(p for p in old if p not in new)),
        )

    @property
    def paths(self) -> tuple[str, ...]:
        """Every changed path, sorted."""
        return tuple(sorted((*self.added, *self.modified, *self.deleted)))

    def __bool__(self) -> bool:
        return bool(self.added or self.modified or self.deleted)


@dataclass(slots=True)
class WorkspaceTimeline:
    """Snapshots taken at transcript positions (number of entries seen when taken).

    A diff between two positions uses the latest snapshot at or before the first and the
    earliest at or after the second, so a timeline with only a before and an after snapshot
    still answers every question, just with less precision per phase.
    """

    _positions: list[int] = field(default_factory=list)
    _snapshots: list[WorkspaceSnapshot] = field(default_factory=list)

    @classmethod
    def of(cls, points: Iterable[tuple[int, WorkspaceSnapshot]]) -> WorkspaceTimeline:
        """A timeline from (position, snapshot) pairs."""
        timeline = cls()
        for position, snapshot in points:
            timeline.record(position, snapshot)
        return timeline

    def record(self, position: int, snapshot: WorkspaceSnapshot) -> None:
        """Add a snapshot taken after ``position`` transcript entries (replaces an equal one)."""
        at = bisect.bisect_left(self._positions, position)
        if at < len(self._positions) and self._positions[at] == position:
            self._snapshots[at] = snapshot
        else:
            self._positions.insert(at, position)
            self._snapshots.insert(at, snapshot)

    def diff(self, start: int, end: int) -> WorkspaceDiff:
        """What changed on disk between transcript positions ``start`` and ``end``."""
        around = self.around(start, end)
        return WorkspaceDiff() if around is None else WorkspaceDiff.between(*around)

    def around(self, start: int, end: int) -> tuple[WorkspaceSnapshot, WorkspaceSnapshot] | None:
        """The snapshots :meth:`diff` compares for ``start`` and ``end``: the latest at or
        before ``start``, the earliest at or after ``end`` (None when there is none)."""
        if not self._positions:
            return None
        first = max(bisect.bisect_right(self._positions, start) - 1, 0)
        last = min(bisect.bisect_left(self._positions, end), len(self._positions) - 1)
        return self._snapshots[first], self._snapshots[max(first, last)]

    @property
    def latest(self) -> WorkspaceSnapshot:
        """The snapshot at the latest position (the disk as last seen; empty when none)."""
        return self._snapshots[-1] if self._snapshots else WorkspaceSnapshot()

    def total(self) -> WorkspaceDiff:
        """What changed between the first and the last snapshot."""
        if not self._snapshots:
            return WorkspaceDiff()
        return WorkspaceDiff.between(self._snapshots[0], self._snapshots[-1])


def attributed_timeline(
    diff: WorkspaceDiff, changed_at: Mapping[str, int], length: int
) -> WorkspaceTimeline:
    """A timeline for a transcript judged after the fact, from one before/after ``diff``.

    With no snapshots from the run, each changed path is taken to have changed right after
    transcript entry ``changed_at[path]`` (e.g. the last tool call that edited it); a path
    without one changed at the end (``length``). The snapshots hold the changed paths only.
    """
    before = {p: f"before:{p}" for p in (*diff.modified, *diff.deleted)}
    after = {p: f"after:{p}" for p in (*diff.added, *diff.modified)}
    when = {p: min(changed_at.get(p, length - 1) + 1, length) for p in diff.paths}
    points = [(0, WorkspaceSnapshot(before))]
    for position in sorted(set(when.values()) | {length}):
        if position - 1 > points[-1][0]:
            # Unchanged until just before: a diff ends on the earliest snapshot at or after a
            # window's end, which must not show a change made after the window.
            points.append((position - 1, points[-1][1]))
        state = dict(before)
        for path, at in when.items():
            if at <= position:
                state.pop(path, None)
                if path in after:
                    state[path] = after[path]
        points.append((position, WorkspaceSnapshot(state)))
    return WorkspaceTimeline.of(points)
