"""A saved Claude Code transcript read from its file, and the disk's changes placed in it.

What judging a saved transcript (:mod:`phasegate.tasks.saved`) and the plugin's Stop hook
both need, apart from the report they make: reading the file within a bound, and a timeline
that puts each change on disk after the call that made it (no snapshots were taken while the
model worked). Kept light: no report model, no agent adapter.
"""

from __future__ import annotations

from pathlib import Path

from phasegate._files.limits import FileTooLargeError, read_bounded
from phasegate.errors import UsageError
from phasegate.evidence.saved_transcript import ReadStats, read_transcript_text
from phasegate.evidence.transcript import Transcript
from phasegate.evidence.workspace import WorkspaceDiff, WorkspaceTimeline, attributed_timeline
from phasegate.validators.reconcile import edit_positions
from phasegate.validators.tools import tool_calls

SHELL_TOOLS = frozenset({"Bash"})
"""Tools that may change any file: a change no editing tool names is put after the last one."""

MAX_TRANSCRIPT_BYTES = 128 * 1024 * 1024
"""The largest transcript file read (the file is read whole): 128 MiB."""

EXPECTED_SHAPES = (
    "Claude Code stream-json lines (`claude -p --output-format stream-json --verbose`), "
    "a JSON array of those messages (claude-code-action's execution file), or a Claude Code "
    "session log (~/.claude/projects/<project>/<session>.jsonl)"
)
"""What a transcript file may hold, as error messages say it."""


def read_transcript(
    path: Path, *, max_bytes: int = MAX_TRANSCRIPT_BYTES
) -> tuple[Transcript, ReadStats]:
    """The transcript saved in ``path``, and how its messages were read.

    Raises :class:`~phasegate.errors.UsageError` when the file cannot be read, is larger
    than ``max_bytes``, or holds no Claude Code message at all.
    """
    try:
        data: bytes | None = read_bounded(path, max_bytes)
    except OSError as exc:
        raise UsageError(f"cannot read transcript {path}: {exc.strerror or exc}") from None
    except FileTooLargeError:
        data = None
    if data is None:
        raise UsageError(
            f"transcript {path} is larger than {max_bytes} bytes, the most a transcript may "
            "have; judge the transcript of a single run (cut the file to it)",
            option="max_bytes",
        )
    text = data.decode("utf-8", errors="replace")
    del data  # only the text is held while it is read
    parsed = read_transcript_text(text)
    stats = parsed.stats
    if stats.understood == 0:
        raise UsageError(
            f"{path} holds no Claude Code messages ({_account(stats)}); expected {EXPECTED_SHAPES}"
        )
    return parsed.transcript, stats


def _account(stats: ReadStats) -> str:
    """What was found instead of messages, in a few words."""
    found = [
        f"{stats.not_json} line(s) that are not JSON" if stats.not_json else "",
        f"{stats.unrecognised} other JSON value(s)" if stats.unrecognised else "",
        f"{stats.ignored} line(s) with nothing to judge" if stats.ignored else "",
    ]
    found = [part for part in found if part]
    where = "line" if stats.shape == "json-lines" else "element"
    example = f", e.g. {where} {stats.example_at}: {stats.example}" if stats.example else ""
    return (", ".join(found) or "it is empty") + example


def changes_timeline(transcript: Transcript, diff: WorkspaceDiff, cwd: str) -> WorkspaceTimeline:
    """A timeline for ``transcript`` from one before/after ``diff`` of the work directory
    ``cwd``: each change right after the last successful call that edited the file, else
    after the last shell command, else at the end (what per-phase ``require_changes``
    needs when no snapshots were taken during the run)."""
    calls = tool_calls(transcript)
    positions = edit_positions(calls, cwd)
    shell = [r.position for r in calls if r.ok and r.call.name in SHELL_TOOLS]
    for path in diff.paths:
        if path not in positions and shell:
            positions[path] = shell[-1]
    return attributed_timeline(diff, positions, len(transcript))
