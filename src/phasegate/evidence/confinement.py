"""Attempts to leave the sandbox, as a transcript shows them: the one notion of "a confinement
refusal" every view of a run reuses (the report's ``blocked``, docs/sandbox.md).

Three kinds, each found in what the run recorded, never guessed from the command:

* ``file_tool``: an Edit, Write, MultiEdit or NotebookEdit call refused before it ran because
  its file lay outside the work directory (a :class:`~phasegate.evidence.transcript.
  ToolRefused` entry whose reason is :data:`OUTSIDE_REFUSAL`'s);
* ``path``: a shell command whose write the sandbox turned away (its result says
  ``Read-only file system``: Claude Code 2.1.332 on Linux, docs/claude-code.md);
* ``host``: a connection the sandbox's proxy refused (Claude Code lists them after the
  command's output, ``<sandbox_violations>`` lines such as ``deny network-outbound
  example.com:443``).

What a command printed is the agent's own text: a command may print those words without
being blocked. They only ever add to this record, which changes no verdict: a run whose
attempts were all blocked is judged on its work like any other.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from phasegate.evidence.transcript import Entry, ToolCall, ToolRefused, ToolResult

BlockedKind = Literal["file_tool", "path", "host"]
"""What was kept in: a file tool's write, a command's write, a command's connection."""

OUTSIDE_REFUSAL = "is outside the work directory, and this run is confined to it"
"""The words of every refusal of a file tool writing outside a confined run's work directory."""

READ_ONLY = "Read-only file system"
"""What a write outside the sandbox's writable folders fails with (Linux, bubblewrap)."""

SHOWN = 300
"""Characters of a line a record keeps."""

_VIOLATIONS = re.compile(r"<sandbox_violations>\s*(.*?)\s*</sandbox_violations>", re.S)


class Blocked(BaseModel):
    """One attempt to leave the sandbox, and the call it belongs to."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: BlockedKind
    tool: str
    tool_use_id: str
    detail: str = Field(description="The line that says so: the refusal, the error, the deny.")


def blocked_attempts(entries: Sequence[Entry]) -> tuple[Blocked, ...]:
    """Every attempt to leave the sandbox in ``entries``, in order (see the module docstring)."""
    names = {e.id: e.name for e in entries if isinstance(e, ToolCall)}
    found: list[Blocked] = []
    for entry in entries:
        if isinstance(entry, ToolRefused) and OUTSIDE_REFUSAL in entry.reason:
            found.append(
                Blocked(kind="file_tool", tool=entry.name, tool_use_id=entry.tool_use_id,
                        detail=_shown(entry.reason))
            )  # fmt: skip
        elif isinstance(entry, ToolResult):
            tool = names.get(entry.tool_use_id, "")
            found.extend(_in_result(entry, tool))
    return tuple(found)


def _in_result(result: ToolResult, tool: str) -> list[Blocked]:
    content = result.content
    found: list[Blocked] = []
    violations = _VIOLATIONS.findall(content)
    outside = _VIOLATIONS.sub("", content)
    for line in outside.splitlines():
        if READ_ONLY in line:
            found.append(_blocked("path", tool, result, line))
    for block in violations:
        for line in block.splitlines():
            if line.strip():
                kind: BlockedKind = "host" if "network" in line else "path"
                found.append(_blocked(kind, tool, result, line))
    return found


def _blocked(kind: BlockedKind, tool: str, result: ToolResult, line: str) -> Blocked:
    return Blocked(kind=kind, tool=tool, tool_use_id=result.tool_use_id, detail=_shown(line))


def _shown(text: str) -> str:
    line = "".join(c if c.isprintable() else " " for c in text.strip())
    return line if len(line) <= SHOWN else line[: SHOWN - 1] + "…"
