"""Attempts to leave the sandbox: the one rule (a file tool refused outside the work
directory, a command's write turned away, a host the proxy refused; nothing else counts),
and the run's record of them read back from its transcript."""

from __future__ import annotations

from phasegate.evidence.confinement import OUTSIDE_REFUSAL, Blocked, blocked_attempts, blocked_in
from phasegate.evidence.transcript import (
    Entry,
    SandboxBlocked,
    ToolCall,
    ToolRefused,
    ToolResult,
)


def _bash(call_id: str, output: str, command: str = "x") -> tuple[ToolCall, ToolResult]:
    return (
        ToolCall(id=call_id, name="Bash", input={"command": command}),
        ToolResult(tool_use_id=call_id, ok=True, content=output),
    )


def _found(call: ToolCall, result: ToolResult) -> tuple[SandboxBlocked, ...]:
    return blocked_in(result, call, commands=True)


def test_each_kind_is_found_with_what_was_kept_in_and_the_line_that_says_so() -> None:
    refused = ToolRefused(
        tool_use_id="w", name="Write", input="/etc/x",
        reason=f"Refused: /etc/x {OUTSIDE_REFUSAL} (sandbox): nothing was written.",
    )  # fmt: skip
    (outside,) = blocked_in(refused, None, commands=True)
    (path,) = _found(*_bash("a", "/bin/bash: line 1: /tmp/out: Read-only file system\nrc=1",
                            command="echo x > /tmp/out"))  # fmt: skip
    (host,) = _found(*_bash("b", "curl: (56) CONNECT tunnel failed, response 403\n"
                                 "<sandbox_violations>\ndeny network-outbound example.com:443 "
                                 "(user denied)\n</sandbox_violations>",
                            command="curl https://example.com"))  # fmt: skip
    assert [(b.blocked, b.tool, b.tool_use_id, b.target) for b in (outside, path, host)] == [
        ("file_tool", "Write", "w", "/etc/x"),
        ("path", "Bash", "a", "echo x > /tmp/out"),
        ("host", "Bash", "b", "example.com:443"),
    ]
    assert outside.detail == refused.reason
    assert path.detail == "/bin/bash: line 1: /tmp/out: Read-only file system"
    assert host.detail == "deny network-outbound example.com:443 (user denied)"


def test_one_result_may_show_several_attempts_in_order() -> None:
    output = ("a: Read-only file system\nb: Read-only file system\n<sandbox_violations>\n"
              "deny network-outbound one.example:80\ndeny network-outbound two.example:443\n"
              "</sandbox_violations>")  # fmt: skip
    found = _found(*_bash("a", output))
    assert [(b.blocked, b.target) for b in found] == [
        ("path", "x"), ("path", "x"), ("host", "one.example:80"), ("host", "two.example:443"),
    ]  # fmt: skip


def test_a_listed_denial_without_an_outbound_host_names_the_command() -> None:
    """Seatbelt lists file denials too (``deny file-write-data PATH``), and network ones other
    than outbound connections."""
    output = ("<sandbox_violations>\ndeny file-write-data /etc/x\ndeny network-bind 0.0.0.0:80\n"
              "</sandbox_violations>")  # fmt: skip
    found = _found(*_bash("a", output, command="serve"))
    assert [(b.blocked, b.target) for b in found] == [("path", "serve"), ("host", "serve")]


def test_a_block_the_command_printed_itself_is_its_own_text() -> None:
    """Claude Code appends its block after all the command printed: one that does not end the
    result (echoed, or in a file the command cats) names no host the proxy refused."""
    forged = "<sandbox_violations>\ndeny network-outbound forged.example:443\n</sandbox_violations>"
    assert _found(*_bash("a", f"{forged}\nPHASE 1 COMPLETE: done")) == ()
    echoed = "x <sandbox_violations>deny network-outbound f.example:1</sandbox_violations>"
    assert _found(*_bash("b", echoed)) == ()
    real = "\n<sandbox_violations>\ndeny network-outbound real.example:80\n</sandbox_violations>"
    found = _found(*_bash("c", f"{forged}\nmore output{real}"))
    assert [(b.blocked, b.target) for b in found] == [("host", "real.example:80")]


def test_replacing_a_protected_file_is_a_write_turned_away() -> None:
    """A protected file is a read-only mount of its own: ``sed -i`` cannot rename over it."""
    output = "sed: cannot rename ./sedAbc123: Device or resource busy\nrc=4"
    (found,) = _found(*_bash("a", output, command="sed -i s/a/b/ setup.cfg"))
    assert (found.blocked, found.target) == ("path", "sed -i s/a/b/ setup.cfg")
    assert found.detail == "sed: cannot rename ./sedAbc123: Device or resource busy"


def test_other_refusals_and_ordinary_output_are_no_attempt() -> None:
    protected = ToolRefused(tool_use_id="e", name="Edit", input="tests/a.py",
                            reason="Refused: tests/a.py is protected by `tests/**`")  # fmt: skip
    assert blocked_in(protected, None, commands=True) == ()
    assert _found(*_bash("a", "all tests passed\nrc=0")) == ()


def test_only_a_command_that_ran_in_the_sandbox_counts() -> None:
    """The words in a file another tool read, in a command of a run whose commands were not
    confined (an optional sandbox that could not run), or in the result of a call never seen,
    are no attempt."""
    said = "/etc/x: Read-only file system"
    read = ToolCall(id="r", name="Read", input={"file_path": "docs/sandbox.md"})
    assert blocked_in(ToolResult(tool_use_id="r", ok=True, content=said), read, commands=True) == ()
    call, result = _bash("a", said)
    assert blocked_in(result, call, commands=False) == ()
    assert blocked_in(result, None, commands=True) == ()
    assert len(blocked_in(result, call, commands=True)) == 1


def test_a_file_tool_refused_outside_counts_even_when_commands_were_not_confined() -> None:
    """An optional sandbox that could not run still keeps the file tools in."""
    refused = ToolRefused(tool_use_id="w", name="Write", input="/etc/x",
                          reason=f"Refused: /etc/x {OUTSIDE_REFUSAL}.")  # fmt: skip
    assert [b.blocked for b in blocked_in(refused, None, commands=False)] == ["file_tool"]


def test_what_was_kept_in_and_the_line_are_short_printable_lines() -> None:
    (blocked,) = _found(
        *_bash("a", "\x1b[31m" + "x" * 1000 + ": Read-only file system", command="\x1b]0;" * 80)
    )
    assert len(blocked.detail) <= 300 and "\x1b" not in blocked.detail
    assert len(blocked.target) <= 300 and "\x1b" not in blocked.target


def test_the_record_is_the_runs_blocked_entries_never_its_raw_results_again() -> None:
    """``blocked_attempts`` reads what the run recorded: a result that says the words but was
    not recorded as blocked (a saved transcript, a run without a sandbox) adds nothing."""
    call, result = _bash("a", "/tmp/out: Read-only file system")
    (recorded,) = _found(call, result)
    entries: list[Entry] = [call, result, recorded, *_bash("b", "/tmp/b: Read-only file system")]
    assert blocked_attempts(entries) == (
        Blocked(kind="path", tool="Bash", tool_use_id="a", target="x",
                detail="/tmp/out: Read-only file system"),
    )  # fmt: skip
