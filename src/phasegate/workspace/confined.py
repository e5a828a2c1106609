"""Paths inside a work directory, entered and removed without following a link out of it.

A relative POSIX path counts as inside the work directory only if every directory on the way
down to it is a real directory: a symbolic link on the way may lead anywhere, so it is never
followed, and what lies below it is left alone (:func:`phasegate._files.confined.blocked_at`
checks each step, for every folder phasegate writes in).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from pathlib import Path

from phasegate._files.confined import blocked_at


def parent_of(relative: str) -> str:
    """The directory holding a relative path ("" for the work dir itself)."""
    return relative.rpartition("/")[0]


def directories_of(relative: str) -> list[str]:
    """The directories above a relative path, outermost first, not counting the work dir."""
    parts = relative.split("/")[:-1]
    return ["/".join(parts[: depth + 1]) for depth in range(len(parts))]


def remove_added(workdir: Path, added: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """Delete the files (or links) in ``added``: the paths removed, and one
    ``path: reason`` entry per path that could not be.

    A path already gone counts as removed. ``added`` must be sorted, so that a link the run put
    in place of a directory goes before the paths below it.
    """
    removed: list[str] = []
    failed: list[str] = []
    for relative in added:
        try:
            blocked = blocked_at(workdir, parent_of(relative))
            if blocked is None:
                (workdir / relative).unlink()
        except FileNotFoundError:
            blocked = None  # already gone, with its file or with a directory above it
        except OSError as exc:
            blocked = exc.strerror or str(exc)
        if blocked is None:
            removed.append(relative)
        else:
            failed.append(f"{relative}: {blocked}")
    return removed, failed


def remove_created_directories(
    workdir: Path, added: tuple[str, ...], before: Iterable[str]
) -> None:
    """Remove, deepest first, the directories only the ``added`` files needed: those above an
    added file and above none of the files that were there ``before``. A directory that is not
    empty stays."""
    existed = {d for relative in before for d in directories_of(relative)}
    created = {d for relative in added for d in directories_of(relative)} - existed
    for directory in sorted(created, key=lambda d: d.count("/"), reverse=True):
        with contextlib.suppress(OSError):
            # Not empty means it holds files the observer does not see: those stay.
            if blocked_at(workdir, directory) is None:
                (workdir / directory).rmdir()
