"""The unified diff of the work directory over one part of a run, bounded in size.

Pure: the two snapshots say which files changed, the kept texts
(:class:`~phasegate.workspace.contents.FileContents`) what they held. A file without kept
text on either side (binary, too large, unreadable, a symbolic link, or reached through one)
is named in the note instead of diffed. A path with a character that could pass for a diff
line of its own (a newline, a control character, a quote or a backslash) is written quoted,
as git quotes it, so no file name makes a hunk.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass

from phasegate.evidence.workspace import WorkspaceDiff, WorkspaceSnapshot
from phasegate.workspace.contents import FileContents

DIFF_BYTES = 256 << 10
"""The largest diff of one part (256 KiB); a longer one is cut at a line's end."""
_NO_NEWLINE = "\\ No newline at end of file\n"


@dataclass(frozen=True, slots=True)
class PartDiff:
    """A part's diff: its text (empty when nothing could be diffed), the paths changed,
    whether it was cut, and the sentences for the page."""

    text: str
    files: tuple[str, ...]
    cut: bool
    notes: tuple[str, ...]
    left_out: tuple[str, ...]
    """The notes about what was left out for size (a recording's ``cut``)."""


def part_diff(
    before: WorkspaceSnapshot,
    after: WorkspaceSnapshot,
    contents: FileContents,
    *,
    bound: int = DIFF_BYTES,
) -> PartDiff:
    """The unified diff from ``before`` to ``after``, at most ``bound`` bytes of UTF-8."""
    changed = WorkspaceDiff.between(before, after)
    pieces: list[str] = []
    notes: list[str] = []
    left_out: list[str] = []
    for path in changed.paths:
        old, new = before.files.get(path), after.files.get(path)
        missing = next((d for d in (old, new) if d is not None and contents.text(d) is None), None)
        if missing is not None:
            note = f"{_quoted(path)} {contents.why_not(missing)}, so it is not diffed."
            notes.append(note)
            if contents.too_large(missing):
                left_out.append(note)
            continue
        pieces.append(_file_diff(path, _text(contents, old), _text(contents, new), old, new))
    text, cut = _bounded("".join(pieces), bound)
    if cut:
        note = f"The diff was cut at {bound} bytes; what lies past that is not shown."
        notes.append(note)
        left_out.append(note)
    return PartDiff(text, changed.paths, cut, tuple(notes), tuple(left_out))


def _text(contents: FileContents, digest: str | None) -> str:
    return "" if digest is None else contents.text(digest) or ""


def _file_diff(
    path: str, old: str, new: str, old_digest: str | None, new_digest: str | None
) -> str:
    """One file's unified diff (``/dev/null`` for the side where it does not exist)."""
    source = "/dev/null" if old_digest is None else _quoted(f"a/{path}")
    target = "/dev/null" if new_digest is None else _quoted(f"b/{path}")
    lines = difflib.unified_diff(
        _lines(old), _lines(new), fromfile=source, tofile=target, lineterm="\n"
    )
    out = []
    for line in lines:
        if line.endswith("\n"):
            out.append(line)
        else:  # the file's last line has no newline: say so as diff does
            out.append(line + "\n" + _NO_NEWLINE)
    return "".join(out)


def _lines(text: str) -> list[str]:
    """``text`` in lines that keep their ``\\n``; only ``\\n`` ends a line (a lone ``\\r``
    or a form feed is part of the line, so the diff's lines are the file's)."""
    lines = text.split("\n")
    last = lines.pop()
    result = [line + "\n" for line in lines]
    if last:
        result.append(last)
    return result


def _quoted(path: str) -> str:
    """``path`` as written in a diff header: quoted when a character in it could be read
    as the diff's own (git's rule)."""
    if any(ord(c) < 0x20 or c in '"\\\x7f' for c in path):
        return json.dumps(path)
    return path


def _bounded(text: str, bound: int) -> tuple[str, bool]:
    """``text`` cut to at most ``bound`` bytes of UTF-8, at the end of a line."""
    data = text.encode("utf-8")
    if len(data) <= bound:
        return text, False
    head = data[:bound]
    end = head.rfind(b"\n")
    return head[: end + 1].decode("utf-8", "ignore"), True
