"""Ralph's state file (``.claude/ralph-loop.local.md``), read as a loop.

The file is Markdown with front matter between two ``---`` lines, the prompt after it::

    ---
    active: true
    iteration: 1
    max_iterations: 20
    completion_promise: "DONE"
    started_at: "2026-01-01T00:00:00Z"
    ---

    Build a REST API for todos. Say <promise>DONE</promise> when the tests pass.

The front matter is read as Ralph's Stop hook reads it, line by line, not as YAML (Ralph
writes the promise unescaped): a key's value is what follows ``key:`` and its spaces on the
first line starting with ``key:``, with one surrounding pair of ``"`` removed and nothing
else interpreted, so ``completion_promise: "C:\\Done"`` promises ``C:\\Done`` and
``completion_promise: "say "ok" now"`` promises ``say "ok" now``. A promise of ``null`` (or
none at all) means the file sets none. ``iteration``, ``max_iterations`` (0: no limit) and
``fresh_context_interval`` are whole numbers.

Ralph's hook deletes a file it cannot read and lets the session stop; here a broken file is
a :class:`~phasegate.errors.LoopStateError` (exit code 2) naming its line, and the file is
left as it was: phasegate never writes or deletes it. Keys Ralph's hook does not read
(``active``, ``session_id``, ``started_at``, newer ones) are accepted and left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from phasegate._files import ParseProblem, read_text
from phasegate.errors import LoopStateError

RALPH_STATE_FILE = Path(".claude") / "ralph-loop.local.md"
"""Where Ralph keeps its state, relative to the project."""
_FENCE = "---"
_LINE_BREAK = re.compile(r"\r?\n")
_MAX_DIGITS = 18
"""The longest whole number a state file may give (Ralph's shell arithmetic holds 18)."""
_KEY_LINE = re.compile(
    r"(iteration|max_iterations|completion_promise|fresh_context_interval): *(.*)"
)
"""A front matter line setting a key Ralph's hook reads: the key, then its raw value."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RalphState:
    """What a Ralph state file says."""

    prompt: str
    """The body after the front matter, without its surrounding blank lines."""
    promise: str | None
    """``completion_promise``; None when the file sets none (``null``)."""
    iteration: int
    """The iteration Ralph was on (1 for a loop that has not stopped yet)."""
    max_iterations: int
    """The iteration limit; 0 means Ralph sets none."""
    fresh_context_interval: int | None = None
    """Iterations between fresh contexts, when the file sets it."""

    @property
    def iterations_left(self) -> int | None:
        """Iterations the file's limit leaves, this one included; None without a limit."""
        if self.max_iterations == 0:
            return None
        return max(self.max_iterations - max(self.iteration, 1) + 1, 0)


def read_ralph_state(path: str | Path) -> RalphState:
    """Read a Ralph state file; a :class:`LoopStateError` naming the line otherwise."""
    file = Path(path)
    try:
        text = read_text(file)
    except OSError as exc:
        raise LoopStateError(file, None, f"cannot read it: {exc.strerror or exc}") from None
    except ParseProblem as exc:
        raise LoopStateError(file, None, str(exc)) from None
    lines = _LINE_BREAK.split(text)  # as sed reads it: a promise may hold any other character
    if not lines or lines[0].rstrip() != _FENCE:
        raise LoopStateError(file, "line 1", "must be '---', opening the front matter")
    close = next((i for i, line in enumerate(lines) if i and line.rstrip() == _FENCE), None)
    if close is None:
        raise LoopStateError(
            file, "line 1", "the front matter opened here is never closed by a '---' line"
        )
    values = _front_matter(lines[1:close])
    prompt = "\n".join(lines[close + 1 :]).strip("\n")
    if not prompt.strip():
        raise LoopStateError(
            file, f"line {close + 2}", "no prompt after the front matter; write the prompt there"
        )
    promise = values.get("completion_promise")
    interval = values.get("fresh_context_interval")
    return RalphState(
        prompt=prompt,
        promise=None if promise is None or promise[1] in ("", "null") else promise[1],
        iteration=_whole(file, values, "iteration"),
        max_iterations=_whole(file, values, "max_iterations"),
        fresh_context_interval=(
            None
            if interval is None or interval[1] in ("", "null")
            else _whole(file, values, "fresh_context_interval")
        ),
    )


def _front_matter(front: list[str]) -> dict[str, tuple[int, str]]:
    """Each key Ralph's hook reads, with its line number in the file and its value: after
    ``key:`` and its spaces, trailing spaces and one surrounding pair of ``"`` removed. The
    first line setting a key wins."""
    found: dict[str, tuple[int, str]] = {}
    for number, line in enumerate(front, start=2):
        match = _KEY_LINE.match(line)
        if match and match.group(1) not in found:
            value = match.group(2).rstrip(" \t")
            if len(value) >= 2 and value[0] == value[-1] == '"':
                value = value[1:-1]
            found[match.group(1)] = (number, value)
    return found


def _whole(file: Path, values: dict[str, tuple[int, str]], key: str) -> int:
    if key not in values:
        raise LoopStateError(file, f"line 1 ({key})", f"{key} is missing; give a whole number ≥ 0")
    number, value = values[key]
    if not (value.isascii() and value.isdigit() and len(value) <= _MAX_DIGITS):
        shown = value if len(value) <= 40 else value[:39] + "…"
        raise LoopStateError(
            file,
            f"line {number} ({key})",
            f"must be a whole number ≥ 0 of at most {_MAX_DIGITS} digits, not {shown!r}",
        )
    return int(value)
