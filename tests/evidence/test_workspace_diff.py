"""Snapshots, diffs and the timeline of snapshots (phasegate.evidence.workspace)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from phasegate.evidence.workspace import WorkspaceDiff, WorkspaceSnapshot, WorkspaceTimeline

BEFORE = {"app.py": "h1", "util.py": "u1", "old.txt": "o1"}
AFTER_EDIT = {"app.py": "h2", "util.py": "u1", "old.txt": "o1"}
AFTER_ALL = {"app.py": "h2", "util.py": "u1", "new/test_app.py": "t1"}


def test_between_sorts_changes_into_added_modified_and_deleted() -> None:
    """A new path is added, a changed hash is modified, a vanished path is deleted."""
    before = WorkspaceSnapshot({"a.py": "1", "b.py": "1", "gone.py": "1"})
    after = WorkspaceSnapshot({"a.py": "1", "b.py": "2", "z/new.py": "1", "c.py": "1"})

    diff = WorkspaceDiff.between(before, after)

    assert diff == WorkspaceDiff(
        added=("c.py", "z/new.py"), modified=("b.py",), deleted=("gone.py",)
    )
    assert diff.paths == ("b.py", "c.py", "gone.py", "z/new.py")
    assert diff


def test_identical_snapshots_give_an_empty_falsy_diff() -> None:
    """No change at all is an empty, falsy diff."""
    diff = WorkspaceDiff.between(WorkspaceSnapshot(BEFORE), WorkspaceSnapshot(dict(BEFORE)))

    assert diff == WorkspaceDiff()
    assert not diff
    assert diff.paths == ()


def test_an_empty_timeline_has_no_changes() -> None:
    """Without snapshots there is nothing to compare."""
    timeline = WorkspaceTimeline()

    assert not timeline.diff(0, 10)
    assert not timeline.total()


def test_a_timeline_diff_uses_the_snapshots_at_the_window_edges(
    make_timeline: Callable[..., WorkspaceTimeline],
) -> None:
    """With snapshots at 0, 4 and 7, each window sees only its own changes."""
    timeline = make_timeline((0, BEFORE), (4, AFTER_EDIT), (7, AFTER_ALL))

    assert timeline.diff(0, 4) == WorkspaceDiff(modified=("app.py",))
    assert timeline.diff(4, 7) == WorkspaceDiff(added=("new/test_app.py",), deleted=("old.txt",))
    assert timeline.total() == WorkspaceDiff(
        added=("new/test_app.py",), modified=("app.py",), deleted=("old.txt",)
    )


def test_a_timeline_diff_widens_to_the_nearest_snapshots_outside_the_window(
    make_timeline: Callable[..., WorkspaceTimeline],
) -> None:
    """Start uses the latest snapshot at or before it, end the earliest at or after it."""
    timeline = make_timeline((0, BEFORE), (4, AFTER_EDIT), (7, AFTER_ALL))

    assert timeline.diff(2, 3) == timeline.diff(0, 4)
    assert timeline.diff(5, 6) == timeline.diff(4, 7)
    assert timeline.diff(3, 5) == timeline.diff(0, 7)
    assert timeline.diff(7, 20) == WorkspaceDiff()


def test_an_empty_window_on_a_snapshot_has_no_changes(
    make_timeline: Callable[..., WorkspaceTimeline],
) -> None:
    """A window [4, 4) compares the snapshot at 4 with itself."""
    timeline = make_timeline((0, BEFORE), (4, AFTER_EDIT), (7, AFTER_ALL))

    assert not timeline.diff(4, 4)


@pytest.mark.parametrize(("start", "end"), [(0, 9), (0, 3), (2, 5), (5, 9), (3, 3), (0, 50)])
def test_with_only_a_first_and_last_snapshot_every_window_sees_the_total(
    make_timeline: Callable[..., WorkspaceTimeline], start: int, end: int
) -> None:
    """A before/after timeline answers every window with the whole run's changes."""
    timeline = make_timeline((0, BEFORE), (9, AFTER_ALL))

    assert timeline.diff(start, end) == timeline.total()
    assert timeline.total().paths == ("app.py", "new/test_app.py", "old.txt")


def test_snapshots_may_be_recorded_out_of_order_and_replaced(
    make_timeline: Callable[..., WorkspaceTimeline],
) -> None:
    """Recording keeps positions sorted; a second snapshot at a position replaces the first."""
    timeline = make_timeline((7, AFTER_ALL), (0, BEFORE))
    timeline.record(4, WorkspaceSnapshot(BEFORE))
    timeline.record(4, WorkspaceSnapshot(AFTER_EDIT))

    assert timeline.diff(0, 4) == WorkspaceDiff(modified=("app.py",))
    assert timeline.total() == WorkspaceDiff.between(
        WorkspaceSnapshot(BEFORE), WorkspaceSnapshot(AFTER_ALL)
    )
