"""Ralph's state file (``.claude/ralph-loop.local.md``), read as a loop.

The file is Markdown with YAML front matter between two ``---`` lines, the prompt after it::

    ---
    active: true
    iteration: 1
    max_iterations: 20          # 0: unlimited
    completion_promise: "DONE"  # or null
    started_at: "2026-01-01T00:00:00Z"
    ---

    Build a REST API for todos. Say <promise>DONE</promise> when the tests pass.

Ralph's hook deletes a file it cannot read and lets the session stop; here a broken file is
a :class:`~phasegate.errors.LoopStateError` (exit code 2) naming its line, and the file is
left as it was: phasegate never writes or deletes it. Keys Ralph's hook does not read
(``active``, ``session_id``, ``started_at``, newer ones) are accepted and left alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from phasegate._files import ParseProblem, read_text
from phasegate._files.yaml_reading import parse_yaml
from phasegate.errors import LoopStateError

RALPH_STATE_FILE = Path(".claude") / "ralph-loop.local.md"
"""Where Ralph keeps its state, relative to the project."""
_FENCE = "---"


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
    lines = text.splitlines()
    if not lines or lines[0].rstrip() != _FENCE:
        raise LoopStateError(file, "line 1", "must be '---', opening the YAML front matter")
    close = next((i for i, line in enumerate(lines) if i and line.rstrip() == _FENCE), None)
    if close is None:
        raise LoopStateError(
            file, "line 1", "the front matter opened here is never closed by a '---' line"
        )
    # A blank first line keeps YAML's line numbers those of the file.
    front = _front_matter(file, "\n" + "\n".join(lines[1:close]))
    where = _key_lines(lines[1:close])
    promise = front.get("completion_promise")
    if promise is not None and not isinstance(promise, str | int | float):
        raise LoopStateError(
            file, where("completion_promise"), f"must be text or null, not {promise!r}"
        )
    prompt = "\n".join(lines[close + 1 :]).strip("\n")
    if not prompt.strip():
        raise LoopStateError(
            file, f"line {close + 2}", "no prompt after the front matter; write the prompt there"
        )
    interval = front.get("fresh_context_interval")
    return RalphState(
        prompt=prompt,
        promise=None if promise is None else str(promise),
        iteration=_whole(file, front, "iteration", where),
        max_iterations=_whole(file, front, "max_iterations", where),
        fresh_context_interval=(
            None if interval is None else _whole(file, front, "fresh_context_interval", where)
        ),
    )


"""The ``line N (key)`` an error about ``key`` names."""


_Where = Callable[[str], str]
"""The ``line N (key)`` an error about ``key`` names."""


def _front_matter(file: Path, text: str) -> dict[str, object]:
    try:
        data = parse_yaml(text)
    except ParseProblem as exc:
        raise LoopStateError(file, "front matter", str(exc)) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise LoopStateError(file, "line 2", "the front matter must be key: value lines")
    return {str(key): value for key, value in data.items()}


def _key_lines(front: list[str]) -> _Where:
    """Where each top-level key stands: ``line N (key)``, or the front matter's first line."""
    found: dict[str, int] = {}
    for number, line in enumerate(front, start=2):
        key = line.split(":", 1)[0].strip()
        if ":" in line and not line[:1].isspace():
            found.setdefault(key, number)
    return lambda key: f"line {found[key]} ({key})" if key in found else f"line 1 ({key})"


def _whole(file: Path, front: dict[str, object], key: str, where: _Where) -> int:
    if key not in front:
        raise LoopStateError(file, where(key), f"{key} is missing; give a whole number ≥ 0")
    value = front[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise LoopStateError(file, where(key), f"must be a whole number ≥ 0, not {value!r}")
    return value
