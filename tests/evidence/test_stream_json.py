"""Reading Claude Code ``--output-format stream-json`` lines (phasegate.evidence.stream_json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from phasegate.evidence.saved_transcript import parse_stream_json
from phasegate.evidence.stream_json import entries_from_message
from phasegate.evidence.transcript import (
    AssistantText,
    Entry,
    Notice,
    RunResult,
    SessionStart,
    StopOverridden,
    ToolCall,
    ToolResult,
    TurnUsage,
    Usage,
    UserText,
)

SESSION = "5f1c2a8e-1b7d-4c1e-9a57-0c6d1c1a7e42"
CWD = "/tmp/phasegate-run-abc/project"
MODEL = "claude-sonnet-4-5-20250929"

INIT: dict[str, Any] = {
    "type": "system",
    "subtype": "init",
    "cwd": CWD,
    "session_id": SESSION,
    "tools": ["Task", "Bash", "Glob", "Grep", "Read", "Edit", "Write", "TodoWrite"],
    "mcp_servers": [],
    "model": MODEL,
    "permissionMode": "acceptEdits",
    "slash_commands": ["compact", "review"],
    "apiKeySource": "ANTHROPIC_API_KEY",
    "claude_code_version": "2.1.330",
    "output_style": "default",
    "uuid": "7d0e3f1a-0000-4000-8000-000000000001",
}


def assistant(*content: dict[str, Any], model: str = MODEL, parent: str | None = None) -> str:
    """One assistant stream-json line, shaped as Claude Code writes it."""
    return json.dumps(
        {
            "type": "assistant",
            "message": {
                "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": list(content),
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 12, "output_tokens": 6},
            },
            "parent_tool_use_id": parent,
            "session_id": SESSION,
            "uuid": "7d0e3f1a-0000-4000-8000-000000000002",
        }
    )


def user(content: str | list[dict[str, Any]], parent: str | None = None) -> str:
    """One user stream-json line (a prompt, or tool results)."""
    return json.dumps(
        {
            "type": "user",
            "message": {"role": "user", "content": content},
            "parent_tool_use_id": parent,
            "session_id": SESSION,
            "uuid": "7d0e3f1a-0000-4000-8000-000000000003",
        }
    )


def result(**overrides: Any) -> str:
    """One result stream-json line; ``overrides`` replace or add fields."""
    message: dict[str, Any] = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "duration_ms": 5321,
        "duration_api_ms": 4100,
        "num_turns": 3,
        "result": "Done.",
        "session_id": SESSION,
        "total_cost_usd": 0.0421,
        "usage": {
            "input_tokens": 1520,
            "cache_creation_input_tokens": 4096,
            "cache_read_input_tokens": 8192,
            "output_tokens": 311,
            "server_tool_use": {"web_search_requests": 0},
            "service_tier": "standard",
        },
        "permission_denials": [],
        "uuid": "7d0e3f1a-0000-4000-8000-000000000004",
    }
    message.update(overrides)
    return json.dumps(message)


def _without_usage(entries: tuple[Entry, ...]) -> tuple[Entry, ...]:
    """The entries other than per-response token counts (tested on their own)."""
    return tuple(e for e in entries if not isinstance(e, TurnUsage))


EDIT_INPUT = {
    "file_path": f"{CWD}/app.py",
    "old_string": "return eval(expr)",
    "new_string": "return safe_eval(expr)",
}


def test_a_realistic_session_becomes_entries_in_order() -> None:
    """init, text, tool call, tool result, marker text and result map to their entry kinds."""
    lines = [
        json.dumps(INIT),
        assistant({"type": "text", "text": "I'll fix the eval call."}),
        assistant({"type": "tool_use", "id": "toolu_01A", "name": "Edit", "input": EDIT_INPUT}),
        user(
            [
                {
                    "tool_use_id": "toolu_01A",
                    "type": "tool_result",
                    "content": "The file app.py has been updated.",
                }
            ]
        ),
        assistant({"type": "text", "text": "PHASE 1 COMPLETE: Files have been edited"}),
        result(),
    ]

    parsed = parse_stream_json(lines)

    assert parsed.skipped_lines == 0
    usage = [e for e in parsed.transcript.entries if isinstance(e, TurnUsage)]
    assert len(usage) == 3  # one per assistant line; the blocks share one message id
    assert [r.usage.input_tokens for r in parsed.transcript.responses()] == [
        usage[0].usage.input_tokens
    ]
    assert [e for e in parsed.transcript.entries if not isinstance(e, TurnUsage)] == [
        SessionStart(cwd=CWD, session_id=SESSION, model=MODEL, tools=tuple(INIT["tools"])),
        AssistantText(text="I'll fix the eval call."),
        ToolCall(id="toolu_01A", name="Edit", input=EDIT_INPUT),
        ToolResult(tool_use_id="toolu_01A", ok=True, content="The file app.py has been updated."),
        AssistantText(text="PHASE 1 COMPLETE: Files have been edited"),
        RunResult(
            is_error=False,
            subtype="success",
            num_turns=3,
            duration_ms=5321,
            usage=Usage(
                input_tokens=1520,
                output_tokens=311,
                cache_creation_input_tokens=4096,
                cache_read_input_tokens=8192,
                cost_usd=0.0421,
            ),
            text="Done.",
        ),
    ]
    assert parsed.transcript.cwd == CWD


def test_text_and_tool_use_blocks_of_one_message_keep_their_order() -> None:
    """Several content blocks in one assistant message give one entry each, in order."""
    line = assistant(
        {"type": "text", "text": "Reading first."},
        {"type": "tool_use", "id": "toolu_01R", "name": "Read", "input": {"file_path": "/a"}},
        {"type": "thinking", "thinking": "hmm", "signature": "x"},
    )

    entries = _without_usage(parse_stream_json([line]).transcript.entries)

    assert entries == (
        AssistantText(text="Reading first."),
        ToolCall(id="toolu_01R", name="Read", input={"file_path": "/a"}),
    )


def test_a_tool_result_with_is_error_true_is_not_ok() -> None:
    """is_error: true on a tool result is the runtime saying the call failed."""
    line = user(
        [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_01M",
                "content": "<tool_use_error>Error: No such tool available: MultiEdit"
                "</tool_use_error>",
                "is_error": True,
            }
        ]
    )

    (entry,) = _without_usage(parse_stream_json([line]).transcript.entries)

    assert isinstance(entry, ToolResult)
    assert entry.ok is False
    assert "No such tool available: MultiEdit" in entry.content


def test_tool_result_content_given_as_text_blocks_is_joined() -> None:
    """Content as a list of text blocks is flattened line by line; other blocks are dropped."""
    line = user(
        [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_01B",
                "content": [
                    {"type": "text", "text": "collected 3 items"},
                    {"type": "image", "source": {"type": "base64", "data": "AAAA"}},
                    {"type": "text", "text": "3 passed"},
                ],
                "is_error": False,
            }
        ]
    )

    (entry,) = _without_usage(parse_stream_json([line]).transcript.entries)

    assert entry == ToolResult(
        tool_use_id="toolu_01B", ok=True, content="collected 3 items\n3 passed"
    )


def test_a_user_prompt_as_a_string_or_as_text_blocks_is_user_text() -> None:
    """What the agent was told is UserText, never assistant output."""
    lines = [
        user("Fix app.py.\nPHASE 1 COMPLETE: Files have been edited"),
        user([{"type": "text", "text": "The gate has not accepted it yet."}]),
    ]

    entries = parse_stream_json(lines).transcript.entries

    assert entries == (
        UserText(text="Fix app.py.\nPHASE 1 COMPLETE: Files have been edited"),
        UserText(text="The gate has not accepted it yet."),
    )


def test_an_api_failure_result_keeps_its_error_fields() -> None:
    """is_error, api_error_status and terminal_reason survive even when subtype says success."""
    line = result(
        is_error=True,
        api_error_status=529,
        terminal_reason="api_error",
        result="API Error: 529 Overloaded",
        total_cost_usd=0,
        usage={"input_tokens": 0, "output_tokens": 0},
    )

    (entry,) = _without_usage(parse_stream_json([line]).transcript.entries)

    assert isinstance(entry, RunResult)
    assert entry.subtype == "success"
    assert entry.is_error is True
    assert entry.api_error_status == 529
    assert entry.terminal_reason == "api_error"
    assert entry.usage == Usage(cost_usd=0.0)


@pytest.mark.parametrize(
    ("cost", "expected"), [(None, None), (-1, None), ("0.5", None), (True, None), (2, 2.0)]
)
def test_a_missing_or_odd_cost_is_unknown(cost: object, expected: float | None) -> None:
    """Only a non-negative number is a cost; anything else leaves it unknown."""
    (entry,) = parse_stream_json([result(total_cost_usd=cost)]).transcript.entries

    assert isinstance(entry, RunResult)
    assert entry.usage.cost_usd == expected


def test_a_cost_too_large_for_a_float_is_unknown_rather_than_a_crash() -> None:
    """An integer cost beyond float range is dropped, not raised."""
    line = '{"type": "result", "total_cost_usd": 1' + "0" * 400 + "}"

    (entry,) = _without_usage(parse_stream_json([line]).transcript.entries)

    assert isinstance(entry, RunResult)
    assert entry.usage.cost_usd is None


def test_usage_is_summed_over_every_result() -> None:
    """Transcript.result_usage adds the tokens and costs of all results."""
    lines = [
        result(total_cost_usd=0.25, usage={"input_tokens": 10, "output_tokens": 1}),
        result(total_cost_usd=0.5, usage={"input_tokens": 5, "output_tokens": 2}),
    ]

    usage = parse_stream_json(lines).transcript.result_usage()

    assert usage == Usage(input_tokens=15, output_tokens=3, cost_usd=0.75)


def test_a_synthetic_api_error_message_is_a_notice_never_assistant_text() -> None:
    """Text from model <synthetic> is the runtime speaking, so it can never carry a marker."""
    line = assistant(
        {"type": "text", "text": "API Error: 401 authentication_error\nPHASE 1 COMPLETE: done"},
        model="<synthetic>",
    )

    (entry,) = _without_usage(parse_stream_json([line]).transcript.entries)

    assert entry == Notice(text="API Error: 401 authentication_error\nPHASE 1 COMPLETE: done")


def test_a_model_that_types_api_error_is_still_assistant_text() -> None:
    """Only the <synthetic> model makes a notice; the words themselves do not."""
    (entry,) = _without_usage(
        parse_stream_json(
            [assistant({"type": "text", "text": "API Error: I made this up"})]
        ).transcript.entries
    )

    assert isinstance(entry, AssistantText)


def test_sidechain_text_of_a_session_log_is_a_notice_not_the_models_answer() -> None:
    """A session-log line marked isSidechain is a subagent's, like parent_tool_use_id."""
    message = json.loads(assistant({"type": "text", "text": "PHASE 1 COMPLETE: done"}))
    message["isSidechain"] = True

    entries = tuple(entries_from_message(message))
    assert _without_usage(entries) == (Notice(text="PHASE 1 COMPLETE: done"),)


def test_subagent_text_is_a_notice_not_the_models_answer() -> None:
    """Text from a message with parent_tool_use_id belongs to a subagent: it is a Notice."""
    line = assistant(
        {"type": "text", "text": "PHASE 1 COMPLETE: Files have been edited"}, parent="toolu_01T"
    )

    (entry,) = _without_usage(parse_stream_json([line]).transcript.entries)

    assert entry == Notice(text="PHASE 1 COMPLETE: Files have been edited")


@pytest.mark.parametrize(
    "line",
    [
        "not json at all",
        '{"type": "assistant", "message": ',
        "[1, 2, 3]",
        '"a string"',
        "42",
        "1" * 5000,
        "[" * 100_000,
    ],
)
def test_a_line_that_is_not_a_json_object_is_counted_as_skipped(line: str) -> None:
    """Bad lines are counted, never raised, and the good lines around them still parse."""
    parsed = parse_stream_json([json.dumps(INIT), line, result()])

    assert parsed.skipped_lines == 1
    assert [entry.kind for entry in parsed.transcript.entries] == ["session", "result"]


def test_blank_lines_are_ignored_without_counting() -> None:
    """Empty and whitespace-only lines are neither entries nor skipped lines."""
    parsed = parse_stream_json(["", "   ", "\n", json.dumps(INIT)])

    assert parsed.skipped_lines == 0
    assert len(parsed.transcript) == 1


@pytest.mark.parametrize(
    "message",
    [
        {"type": "system", "subtype": "compact_boundary"},
        {"type": "stream_event", "event": {"type": "message_start"}},
        {"type": "assistant", "message": "not a mapping"},
        {"type": "assistant", "message": {"content": "plain string"}},
        {"type": "assistant", "message": {"content": [{"type": "tool_use", "name": "Edit"}]}},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": 5}, 7, None]}},
        {"type": "user", "message": {"content": [{"type": "tool_result", "content": "x"}]}},
        {"type": "user"},
        {},
    ],
)
def test_unknown_or_malformed_messages_contribute_nothing(message: dict[str, Any]) -> None:
    """Unknown types, missing ids and wrongly typed fields are skipped silently."""
    assert entries_from_message(message) == []


def test_malformed_fields_of_known_messages_fall_back_to_defaults() -> None:
    """Wrong types in init and result fields give None or empty values, not errors."""
    (start,) = entries_from_message({"type": "system", "subtype": "init", "cwd": 5, "tools": "x"})
    (end,) = entries_from_message(
        {"type": "result", "is_error": "yes", "num_turns": 2.5, "duration_ms": 7.0, "usage": []}
    )

    assert start == SessionStart()
    assert isinstance(end, RunResult)
    assert (end.is_error, end.num_turns, end.duration_ms, end.usage) == (False, None, 7, Usage())


# ---- transcripts recorded from the real Claude Code CLI (tests/fixtures/transcripts) -------

TRANSCRIPTS_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
RECORDED = sorted(TRANSCRIPTS_DIR.glob("*.jsonl"))
EXPECTED_KINDS = {
    "api_error_500.jsonl": ["session", "notice", "result"],
    "edit_then_json.jsonl": [
        "session",
        "assistant",
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_result",
        "assistant",
        "result",
    ],
    "json_without_edit.jsonl": ["session", "assistant", "result"],
    "stop_hook_feedback.jsonl": ["session", "assistant", "user", "assistant", "result"],
}


@pytest.mark.parametrize("path", RECORDED, ids=[path.name for path in RECORDED])
def test_every_recorded_transcript_parses_from_session_start_to_result(path: Path) -> None:
    """Each real CLI transcript parses fully: a session start with its cwd first, a result last."""
    parsed = parse_stream_json(path.read_text(encoding="utf-8").splitlines())

    entries = parsed.transcript.entries
    assert parsed.skipped_lines == 0
    assert isinstance(entries[0], SessionStart)
    assert parsed.transcript.cwd
    assert isinstance(entries[-1], RunResult)


@pytest.mark.parametrize(("name", "kinds"), sorted(EXPECTED_KINDS.items()))
def test_a_recorded_transcript_yields_the_expected_entry_kinds(name: str, kinds: list[str]) -> None:
    """The known recordings map to exactly the entry kinds of what happened in them."""
    parsed = parse_stream_json((TRANSCRIPTS_DIR / name).read_text(encoding="utf-8").splitlines())

    assert [entry.kind for entry in _without_usage(parsed.transcript.entries)] == kinds


def test_the_recorded_api_failure_is_an_error_result_and_its_message_a_notice() -> None:
    """The CLI's own API-error text is a Notice; the result carries status 500 and api_error."""
    parsed = parse_stream_json((TRANSCRIPTS_DIR / "api_error_500.jsonl").read_text().splitlines())

    _, notice, end = _without_usage(parsed.transcript.entries)
    assert isinstance(notice, Notice)
    assert notice.text.startswith("API Error: 500")
    assert isinstance(end, RunResult)
    assert (end.is_error, end.api_error_status, end.terminal_reason) == (True, 500, "api_error")


def test_the_recorded_edit_has_a_successful_result_linked_by_id() -> None:
    """The Edit call of the recording is linked to its successful tool result."""
    parsed = parse_stream_json((TRANSCRIPTS_DIR / "edit_then_json.jsonl").read_text().splitlines())
    transcript = parsed.transcript

    (edit,) = [e for e in transcript.entries if isinstance(e, ToolCall) and e.name == "Edit"]
    assert edit.input["file_path"] == "/work/project/app.py"
    assert transcript.results_by_call()[edit.id].ok
    assert transcript.result_usage().cost_usd == pytest.approx(0.00406)


# As Claude Code 2.1.330 and 2.1.332 send it when a Stop hook blocked 9 times in a row.
BLOCK_CAP_TEXT = (
    "A hook blocked the turn from ending 9 consecutive times\u2014overriding and ending turn. "
    "For Stop/SubagentStop hooks, check stop_hook_active in the input and return success while "
    "it's true. Set CLAUDE_CODE_STOP_HOOK_BLOCK_CAP to raise this limit."
)


def test_the_block_cap_notification_is_a_stop_override_and_its_prose_twin_is_not() -> None:
    """The keyed notification becomes one StopOverridden entry; the informational line that
    says the same in prose adds nothing, so an override is counted once."""
    notification = {
        "type": "system", "subtype": "notification", "key": "stop-hook-block-cap",
        "text": BLOCK_CAP_TEXT, "priority": "high", "session_id": SESSION,
    }  # fmt: skip
    informational = {
        "type": "system", "subtype": "informational", "content": BLOCK_CAP_TEXT,
        "level": "warning", "session_id": SESSION,
    }  # fmt: skip
    assert entries_from_message(notification) == [StopOverridden(blocks=9, text=BLOCK_CAP_TEXT)]
    assert entries_from_message(informational) == []


def test_a_saved_transcript_counts_its_stop_overrides() -> None:
    """A stream-json file read back keeps the override, and the transcript counts it."""
    notification = {"type": "system", "subtype": "notification", "key": "stop-hook-block-cap"}
    lines = [json.dumps(INIT), json.dumps(notification), json.dumps(notification)]
    transcript = parse_stream_json(lines).transcript
    assert transcript.stop_overrides == 2
    assert [e.blocks for e in transcript.entries if isinstance(e, StopOverridden)] == [None, None]
