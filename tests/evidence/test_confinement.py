"""Attempts to leave the sandbox, found in a transcript: a file tool refused outside the work
directory, a command's write turned away, a host the proxy refused; nothing else counts."""

from __future__ import annotations

from phasegate.evidence.confinement import OUTSIDE_REFUSAL, blocked_attempts
from phasegate.evidence.transcript import Entry, ToolCall, ToolRefused, ToolResult


def _bash(call_id: str, output: str) -> list[Entry]:
    return [
        ToolCall(id=call_id, name="Bash", input={"command": "x"}),
        ToolResult(tool_use_id=call_id, ok=True, content=output),
    ]


def test_each_kind_is_found_with_the_line_that_says_so() -> None:
    entries: list[Entry] = [
        ToolCall(id="w", name="Write", input={"file_path": "/etc/x"}),
        ToolRefused(tool_use_id="w", name="Write", input="/etc/x",
                    reason=f"Refused: /etc/x {OUTSIDE_REFUSAL} (sandbox): nothing was written."),
        ToolResult(tool_use_id="w", ok=False, content=f"hook error: /etc/x {OUTSIDE_REFUSAL}"),
        *_bash("a", "/bin/bash: line 1: /tmp/out: Read-only file system\nrc=1"),
        *_bash("b", "curl: (56) CONNECT tunnel failed, response 403\n<sandbox_violations>\n"
                    "deny network-outbound example.com:443 (user denied)\n</sandbox_violations>"),
    ]  # fmt: skip
    found = blocked_attempts(entries)
    assert [(b.kind, b.tool, b.tool_use_id) for b in found] == [
        ("file_tool", "Write", "w"), ("path", "Bash", "a"), ("host", "Bash", "b"),
    ]  # fmt: skip
    assert found[1].detail == "/bin/bash: line 1: /tmp/out: Read-only file system"
    assert found[2].detail == "deny network-outbound example.com:443 (user denied)"


def test_other_refusals_and_ordinary_output_are_no_attempt() -> None:
    entries: list[Entry] = [
        ToolRefused(tool_use_id="e", name="Edit", input="tests/a.py",
                    reason="Refused: tests/a.py is protected by `tests/**`"),
        *_bash("a", "all tests passed\nrc=0"),
    ]  # fmt: skip
    assert blocked_attempts(entries) == ()


def test_a_detail_is_one_short_printable_line() -> None:
    found = blocked_attempts(_bash("a", "\x1b[31m" + "x" * 1000 + ": Read-only file system"))
    (blocked,) = found
    assert len(blocked.detail) <= 300 and "\x1b" not in blocked.detail
