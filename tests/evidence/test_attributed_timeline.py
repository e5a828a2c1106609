"""A timeline made after the fact from one before/after diff (phasegate.evidence.workspace).

``attributed_timeline`` is what judging a saved transcript uses: each changed path is placed
right after the entry that (last) changed it, so per-phase diffs still work.
"""

from __future__ import annotations

import pytest

from phasegate.evidence.workspace import WorkspaceDiff, attributed_timeline

DIFF = WorkspaceDiff(added=("new.py",), modified=("app.py",), deleted=("old.py",))


def test_each_kind_of_change_lands_in_the_window_of_the_entry_that_made_it() -> None:
    """Modified at entry 1, added at 4, deleted at 6: one path per window, nothing leaks into
    an earlier window from a later change."""
    timeline = attributed_timeline(DIFF, {"app.py": 1, "new.py": 4, "old.py": 6}, 8)

    assert timeline.diff(0, 3) == WorkspaceDiff(modified=("app.py",))
    assert timeline.diff(3, 6) == WorkspaceDiff(added=("new.py",))
    assert timeline.diff(6, 8) == WorkspaceDiff(deleted=("old.py",))


@pytest.mark.parametrize(
    ("start", "end", "paths"),
    [
        (0, 1, ()),
        (0, 2, ("app.py",)),
        (1, 2, ("app.py",)),
        (2, 4, ()),
        (2, 5, ("new.py",)),
        (4, 5, ("new.py",)),
        (5, 6, ()),
        (5, 7, ("old.py",)),
        (7, 8, ()),
        (0, 8, ("app.py", "new.py", "old.py")),
    ],
)
def test_a_change_belongs_to_exactly_the_windows_holding_its_entry(
    start: int, end: int, paths: tuple[str, ...]
) -> None:
    """Window ``[start, end)`` sees a path iff it holds the entry that changed it."""
    timeline = attributed_timeline(DIFF, {"app.py": 1, "new.py": 4, "old.py": 6}, 8)

    assert timeline.diff(start, end).paths == paths


def test_a_path_without_a_position_changes_at_the_end() -> None:
    """No tool named it: it is taken to have changed after the last entry."""
    diff = WorkspaceDiff(modified=("app.py", "generated.txt"))

    timeline = attributed_timeline(diff, {"app.py": 1}, 6)

    assert timeline.diff(0, 3) == WorkspaceDiff(modified=("app.py",))
    assert timeline.diff(3, 5) == WorkspaceDiff()
    assert timeline.diff(5, 6) == WorkspaceDiff(modified=("generated.txt",))


def test_two_paths_changed_by_one_entry_change_together() -> None:
    """One shared position gives both paths to the same window."""
    diff = WorkspaceDiff(modified=("a.py", "b.py"))

    timeline = attributed_timeline(diff, {"a.py": 3, "b.py": 3}, 5)

    assert timeline.diff(0, 3) == WorkspaceDiff()
    assert timeline.diff(3, 4) == WorkspaceDiff(modified=("a.py", "b.py"))
    assert timeline.diff(4, 5) == WorkspaceDiff()


@pytest.mark.parametrize(
    ("diff", "changed_at", "length"),
    [
        (DIFF, {"app.py": 1, "new.py": 4, "old.py": 6}, 8),
        (DIFF, {}, 3),
        (DIFF, {"app.py": 0, "new.py": 99}, 4),
        (WorkspaceDiff(), {}, 5),
        (WorkspaceDiff(deleted=("x.py", "y.py")), {"y.py": 0}, 1),
    ],
    ids=["positioned", "no-positions", "position-past-the-end", "no-changes", "one-entry"],
)
def test_the_whole_timeline_adds_up_to_the_diff_it_was_made_from(
    diff: WorkspaceDiff, changed_at: dict[str, int], length: int
) -> None:
    """``total()`` and the diff over the whole transcript are the input diff, exactly."""
    timeline = attributed_timeline(diff, changed_at, length)

    assert timeline.total() == diff
    assert timeline.diff(0, length) == diff


def test_paths_outside_the_diff_are_not_invented() -> None:
    """A position for a path that did not change adds nothing."""
    timeline = attributed_timeline(WorkspaceDiff(added=("a.py",)), {"a.py": 0, "b.py": 1}, 3)

    assert timeline.total() == WorkspaceDiff(added=("a.py",))
    assert timeline.diff(1, 3) == WorkspaceDiff()
