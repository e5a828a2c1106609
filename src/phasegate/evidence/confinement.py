"""Attempts to leave the sandbox: the one rule of what counts as one (:func:`blocked_in`), and
the run's record of them (:func:`blocked_attempts`), which every view of a run reuses (the
report's ``blocked``, docs/sandbox.md).

Three kinds, each found in what the run recorded, never guessed from the command:

* ``file_tool``: an Edit, Write, MultiEdit or NotebookEdit call refused before it ran because
  its file lay outside the work directory (a :class:`~phasegate.evidence.transcript.
  ToolRefused` entry whose reason is :data:`OUTSIDE_REFUSAL`'s);
* ``path``: a shell command whose write the sandbox turned away (its result says
  ``Read-only file system``, or ``Device or resource busy`` where it replaced a protected
  file, which the sandbox mounts read-only: Claude Code 2.1.332 on Linux,
  docs/claude-code.md);
* ``host``: a connection the sandbox's proxy refused (Claude Code lists them after the
  command's output, ``<sandbox_violations>`` lines such as ``deny network-outbound
  example.com:443``). Only the block that ends the result is Claude Code's: it appends it
  after everything the command printed (2.1.332), so a block the command printed earlier, by
  ``echo`` or from a file it reads out, is the command's own text and counts for nothing.

The sandbox runs the shell tool's commands only (:data:`SANDBOXED_TOOLS`), so only their
results are read for the last two, and only when the run's commands did run in it: a file
another tool read may hold those words. What a command printed is the agent's own text all
the same: a command may print them without being blocked. They only ever add to this record,
which changes no verdict: a run whose attempts were all blocked is judged on its work like
any other.

A run that asked for a sandbox applies the rule to each refusal and each tool result as it
arrives, and records what it finds as :class:`~phasegate.evidence.transcript.SandboxBlocked`
entries right after it, with a ``sandbox.blocked`` event each
(:meth:`phasegate.agents.observer.RunObserver.record_blocked`). The report's list is read back
from those entries: the entries, the events and every count of a run agree.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from phasegate.evidence.transcript import (
    BlockedKind,
    Entry,
    SandboxBlocked,
    ToolCall,
    ToolRefused,
    ToolResult,
)

OUTSIDE_REFUSAL = "is outside the work directory, and this run is confined to it"
"""The words of every refusal of a file tool writing outside a confined run's work directory."""

READ_ONLY = "Read-only file system"
"""What a write outside the sandbox's writable folders fails with (Linux, bubblewrap)."""

BUSY = "Device or resource busy"
"""What replacing a protected file fails with in the sandbox (``sed -i``, ``mv`` over it): the
file is a read-only mount of its own (Linux, bubblewrap)."""

SANDBOXED_TOOLS = frozenset({"Bash"})
"""The tools whose commands run in Claude Code's sandbox (the file tools follow permission
rules instead: docs/sandbox.md)."""

SHOWN = 300
"""Characters of a line a record keeps."""

_OPEN, _CLOSE = "<sandbox_violations>", "</sandbox_violations>"
_OUTBOUND = re.compile(r"network-outbound\s+(\S+)")


class Blocked(BaseModel):
    """One attempt to leave the sandbox, and the call it belongs to."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: BlockedKind
    tool: str
    tool_use_id: str
    target: str = Field(
        default="",
        description="What was kept in: the file a file tool named, the command whose write "
        "was turned away, the host a command tried to reach (empty in reports written before "
        "it was recorded).",
    )
    detail: str = Field(description="The line that says so: the refusal, the error, the deny.")

    @classmethod
    def of(cls, entry: SandboxBlocked) -> Blocked:
        """The attempt a :class:`~phasegate.evidence.transcript.SandboxBlocked` entry records."""
        return cls(kind=entry.blocked, tool=entry.tool, tool_use_id=entry.tool_use_id,
                   target=entry.target, detail=entry.detail)  # fmt: skip


def blocked_in(
    entry: ToolRefused | ToolResult, call: ToolCall | None, *, commands: bool
) -> tuple[SandboxBlocked, ...]:
    """The attempts to leave the sandbox ``entry`` shows, in order (none, most often): a
    refusal of a file tool outside the work directory; with ``commands`` (the run's commands
    ran in the sandbox), each write a command's result says was turned away and each
    connection its proxy refused. ``call``: the call a result answers (None: not seen, so
    not known to be a command). See the module docstring."""
    if isinstance(entry, ToolRefused):
        if OUTSIDE_REFUSAL not in entry.reason:
            return ()
        return (_entry("file_tool", entry.name, entry.tool_use_id, entry.input, entry.reason),)
    if not commands or call is None or call.name not in SANDBOXED_TOOLS:
        return ()
    output, violations = _appended(entry.content)
    found: list[SandboxBlocked] = []
    for line in output.splitlines():
        if READ_ONLY in line or BUSY in line:
            found.append(_entry("path", call.name, entry.tool_use_id, call.brief, line))
    for line in violations:
        kind: BlockedKind = "host" if "network" in line else "path"
        outbound = _OUTBOUND.search(line)
        target = outbound[1] if outbound is not None else call.brief
        found.append(_entry(kind, call.name, entry.tool_use_id, target, line))
    return tuple(found)


def _appended(content: str) -> tuple[str, list[str]]:
    """A command's result split into what the command printed and the lines of the
    ``<sandbox_violations>`` block Claude Code appended after it: the block that ends the
    result, its tags on lines of their own (none: the whole result is the command's)."""
    body = content.rstrip()
    if not body.endswith(_CLOSE):
        return content, []
    start = body.rfind(_OPEN + "\n")
    if start < 0 or (start > 0 and body[start - 1] != "\n"):
        return content, []
    inside = body[start + len(_OPEN) : -len(_CLOSE)]
    if _OPEN in inside or _CLOSE in inside:
        return content, []
    return body[:start], [line for line in inside.splitlines() if line.strip()]


def blocked_attempts(entries: Sequence[Entry]) -> tuple[Blocked, ...]:
    """Every attempt to leave the sandbox a run recorded in ``entries``, in order: its
    :class:`~phasegate.evidence.transcript.SandboxBlocked` entries."""
    return tuple(Blocked.of(e) for e in entries if isinstance(e, SandboxBlocked))


def _entry(
    kind: BlockedKind, tool: str, tool_use_id: str, target: str, line: str
) -> SandboxBlocked:
    return SandboxBlocked(blocked=kind, tool=tool, tool_use_id=tool_use_id,
                          target=_shown(target), detail=_shown(line))  # fmt: skip


def _shown(text: str) -> str:
    line = "".join(c if c.isprintable() else " " for c in text.strip())
    return line if len(line) <= SHOWN else line[: SHOWN - 1] + "…"
