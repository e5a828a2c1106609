"""Three-way merges of a branch's files into a work directory, decided without touching disk.

A pipeline branch works in its own copy of the work directory from a fork point; when it is
joined, each file it changed is merged into the target against that fork point: a file only
the branch changed is taken as the branch left it (added, modified or deleted; a rename is a
delete and an add), a file both changed is merged line by line the way ``git merge-file`` and
``diff3`` do (a region changed on one side only takes that side; changed on both sides in the
same way, that change; otherwise a conflict). A conflict keeps both versions between
``<<<<<<<``/``=======``/``>>>>>>>`` markers and is reported with its hunks; a binary file, or
a file deleted on one side and changed on the other, is a conflict without hunks.

Everything here is pure: :mod:`~phasegate.workspace.branches` reads the three versions and
writes the outcome.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher

BINARY_PROBE = 8000
"""How many leading bytes are looked at for a NUL byte, which makes a file binary (as git)."""


@dataclass(frozen=True, slots=True)
class Hunk:
    """One conflicting region: the lines each side has there, and where the markers start."""

    line: int
    """The 1-based line of the merged file where its ``<<<<<<<`` marker stands."""
    ours: tuple[str, ...]
    theirs: tuple[str, ...]
    base: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FileConflict:
    """A file the merge could not settle: why, and its conflicting hunks (none for a binary
    file or a delete against a change)."""

    path: str
    reason: str
    hunks: tuple[Hunk, ...] = ()


@dataclass(frozen=True, slots=True)
class FileMerge:
    """What becomes of one path in the target: ``content`` (None: the file is removed), and
    the conflict, if any (``content`` then holds the markers, or the version kept)."""

    path: str
    content: bytes | None
    conflict: FileConflict | None = None


def is_binary(data: bytes) -> bool:
    """Whether ``data`` is a binary file's content: a NUL byte near the start, or not UTF-8."""
    if b"\0" in data[:BINARY_PROBE]:
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def merge_file(
    path: str,
    base: bytes | None,
    ours: bytes | None,
    theirs: bytes | None,
    *,
    ours_label: str,
    theirs_label: str,
) -> FileMerge | None:
    """The outcome for ``path`` given its fork-point, target and branch versions (None: the
    file is absent there); None when the target already holds the outcome."""
    if theirs in (base, ours):
        return None
    if ours == base:
        return FileMerge(path, theirs)
    if theirs is None:
        reason = f"deleted in {theirs_label}, changed in {ours_label}; {ours_label}'s version kept"
        return FileMerge(path, ours, FileConflict(path, reason))
    if ours is None:
        reason = (
            f"changed in {theirs_label}, deleted in {ours_label}; {theirs_label}'s version kept"
        )
        return FileMerge(path, theirs, FileConflict(path, reason))
    if any(is_binary(data) for data in (base or b"", ours, theirs)):
        reason = f"a binary file changed on both sides; {ours_label}'s version kept"
        return FileMerge(path, ours, FileConflict(path, reason))
    merged, hunks = merge_lines(
        _lines(base or b""),
        _lines(ours),
        _lines(theirs),
        ours_label=ours_label,
        theirs_label=theirs_label,
    )
    content = "".join(merged).encode("utf-8")
    if not hunks:
        return FileMerge(path, content)
    how = "added on both sides" if base is None else "changed on both sides"
    reason = f"{how}: {len(hunks)} conflicting hunk{'s' if len(hunks) > 1 else ''}"
    return FileMerge(path, content, FileConflict(path, reason, tuple(hunks)))


def merge_lines(
    base: list[str],
    ours: list[str],
    theirs: list[str],
    *,
    ours_label: str,
    theirs_label: str,
) -> tuple[list[str], list[Hunk]]:
    """The merged lines (``keepends`` lines, conflicts between markers) and each conflict."""
    merged: list[str] = []
    hunks: list[Hunk] = []
    at_base = at_ours = at_theirs = 0
    for base_start, base_end, ours_start, theirs_start in _stable_regions(base, ours, theirs):
        chunk_base = base[at_base:base_start]
        chunk_ours = ours[at_ours:ours_start]
        chunk_theirs = theirs[at_theirs:theirs_start]
        if chunk_ours == chunk_base:
            merged += chunk_theirs
        elif chunk_theirs in (chunk_base, chunk_ours):
            merged += chunk_ours
        else:
            hunks.append(
                Hunk(len(merged) + 1, tuple(chunk_ours), tuple(chunk_theirs), tuple(chunk_base))
            )
            merged.append(f"<<<<<<< {ours_label}\n")
            merged += _ended(chunk_ours)
            merged.append("=======\n")
            merged += _ended(chunk_theirs)
            merged.append(f">>>>>>> {theirs_label}\n")
        length = base_end - base_start
        merged += base[base_start:base_end]
        at_base, at_ours, at_theirs = base_end, ours_start + length, theirs_start + length
    return merged, hunks


def _stable_regions(
    base: list[str], ours: list[str], theirs: list[str]
) -> list[tuple[int, int, int, int]]:
    """The regions of ``base`` both sides left as they were: (base start, base end, where it
    starts in ours, where in theirs), in order, ending with an empty region at the ends."""
    with_ours = SequenceMatcher(None, base, ours, autojunk=False).get_matching_blocks()
    with_theirs = SequenceMatcher(None, base, theirs, autojunk=False).get_matching_blocks()
    regions: list[tuple[int, int, int, int]] = []
    i = j = 0
    while i < len(with_ours) and j < len(with_theirs):
        a_base, a_at, a_len = with_ours[i]
        b_base, b_at, b_len = with_theirs[j]
        start, end = max(a_base, b_base), min(a_base + a_len, b_base + b_len)
        if start < end:
            regions.append((start, end, a_at + start - a_base, b_at + start - b_base))
        if a_base + a_len < b_base + b_len:
            i += 1
        else:
            j += 1
    regions.append((len(base), len(base), len(ours), len(theirs)))
    return regions


def _lines(data: bytes) -> list[str]:
    return data.decode("utf-8").splitlines(keepends=True)


def _ended(lines: list[str]) -> list[str]:
    """``lines`` with a line end after the last, so a marker after them starts a line."""
    if lines and not lines[-1].endswith("\n"):
        return [*lines[:-1], lines[-1] + "\n"]
    return lines
