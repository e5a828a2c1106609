"""A saved Claude Code transcript read from its file, and the disk's changes placed in it.

What judging a saved transcript (:mod:`phasegate.tasks.saved`) and the plugin's Stop hook
both need, apart from the report they make: reading the file within a bound, and a timeline
that puts each change on disk after the call that made it (no snapshots were taken while the
model worked). Kept light: no report model, no agent adapter.
"""

from __future__ import annotations

from pathlib import Path

from phasegate._files.limits import FileTooLargeError, read_bounded
from phasegate.errors import ResultOnlyTranscriptError, UsageError
from phasegate.evidence.saved_transcript import ReadStats, read_transcript_text
from phasegate.evidence.transcript import RunResult, Transcript
from phasegate.evidence.workspace import WorkspaceDiff, WorkspaceTimeline, attributed_timeline
from phasegate.validators.reconcile import edit_positions
from phasegate.validators.tools import tool_calls

SHELL_TOOLS = frozenset({"Bash"})
"""Tools that may change any file: a change no editing tool names is put after the last one."""

MAX_TRANSCRIPT_BYTES = 128 * 1024 * 1024
"""The largest transcript file read (the file is read whole): 128 MiB."""

EXPECTED_SHAPES = (
    "Claude Code stream-json lines (`claude -p --output-format stream-json --verbose`), "
    "a JSON array of those messages (claude-code-action's execution file, `claude -p "
    "--output-format json --verbose`), pretty-printed JSON messages, or a Claude Code "
    "session log (~/.claude/projects/<project>/<session>.jsonl)"
)
"""What a transcript file may hold, as error messages say it."""

MAX_SUBAGENT_FILES = 256
"""The most subagent files read beside a session log (``<session>/subagents/``)."""


def read_transcript(
    path: Path, *, max_bytes: int = MAX_TRANSCRIPT_BYTES
) -> tuple[Transcript, ReadStats]:
    """The transcript saved in ``path``, and how its messages were read.

    A session log's subagent files (``<session>/subagents/agent-*.jsonl`` beside
    ``<session>.jsonl``) are read with it, within the same ``max_bytes`` in all.

    Raises :class:`~phasegate.errors.UsageError` when the file cannot be read, is larger
    than ``max_bytes``, or holds no Claude Code message at all, and
    :class:`~phasegate.errors.ResultOnlyTranscriptError` when it holds a run's result alone.
    """
    data = _read_bytes(path, max_bytes, session=path, max_bytes=max_bytes)
    budget = max_bytes - len(data)
    text = data.decode("utf-8", errors="replace")
    subagents = []
    for file in _subagent_files(path):
        data = _read_bytes(file, budget, session=path, max_bytes=max_bytes)
        budget -= len(data)
        subagents.append(data.decode("utf-8", errors="replace"))
    del data  # only the texts are held while they are read
    parsed = read_transcript_text(text, subagents=subagents)
    del text, subagents  # only the entries are held from here
    stats = parsed.stats
    if stats.results_only:
        raise _result_only(path, parsed.transcript)
    if stats.understood == 0:
        raise UsageError(_nothing_understood(path, stats))
    return parsed.transcript, stats


def _read_bytes(path: Path, budget: int, *, session: Path, max_bytes: int) -> bytes:
    """``path`` (the transcript ``session`` or one of its subagent files), within the
    ``budget`` of bytes the transcript has left of its ``max_bytes``."""
    try:
        data: bytes | None = read_bounded(path, budget)
    except OSError as exc:
        raise UsageError(f"cannot read transcript {path}: {exc.strerror or exc}") from None
    except FileTooLargeError:
        data = None
    if data is None:
        files = " with its subagent files" if path != session else ""
        raise UsageError(
            f"transcript {session}{files} is larger than {max_bytes} bytes, the most a "
            "transcript may have; judge the transcript of a single run (cut the file to it)",
            option="max_bytes",
        )
    return data


def _subagent_files(path: Path) -> list[Path]:
    """The subagent files Claude Code 2.1 keeps beside a session log, in name order."""
    folder = path.with_suffix("") / "subagents"
    if path.suffix != ".jsonl" or not folder.is_dir() or folder.is_symlink():
        return []
    files = sorted(
        file for file in folder.glob("agent-*.jsonl") if file.is_file() and not file.is_symlink()
    )
    return files[:MAX_SUBAGENT_FILES]


def _result_only(path: Path, transcript: Transcript) -> ResultOnlyTranscriptError:
    result = next(e for e in reversed(transcript.entries) if isinstance(e, RunResult))
    cost = result.usage.cost_usd
    figures = ", ".join(
        part
        for part in (
            f"${cost:.6f}" if cost is not None else "",
            f"{result.num_turns} turn(s)" if result.num_turns is not None else "",
            f"{result.duration_ms} ms" if result.duration_ms is not None else "",
        )
        if part
    )
    return ResultOnlyTranscriptError(
        f"{path} holds a run's result ({figures or 'no figures'}) and no messages: nothing "
        "to judge. Keep the run's messages: `claude -p --output-format stream-json "
        "--verbose`, or judge its session log (~/.claude/projects/<project>/<session>.jsonl)",
        cost_usd=cost,
        num_turns=result.num_turns,
        duration_ms=result.duration_ms,
    )


def _nothing_understood(path: Path, stats: ReadStats) -> str:
    """Why a file in which no message was understood is refused, in one line."""
    if stats.shape == "json-array" and stats.ignored == stats.unrecognised == 0:
        return f"{path} is an empty JSON array: no messages to judge; judge reads {EXPECTED_SHAPES}"
    if stats.python_reprs:
        return (
            f"{path} holds Python reprs of claude-agent-sdk messages ({stats.python_reprs} "
            "line(s) such as AssistantMessage(...)), which are not JSON; judge reads "
            f"{EXPECTED_SHAPES}"
        )
    return f"{path} holds no Claude Code messages ({_account(stats)}); expected {EXPECTED_SHAPES}"


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
