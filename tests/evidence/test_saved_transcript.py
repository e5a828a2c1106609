"""Reading saved transcripts in every shape (phasegate.evidence.saved_transcript)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from phasegate.evidence.saved_transcript import EXAMPLE_LIMIT, read_transcript_text
from phasegate.evidence.transcript import (
    AgentRef,
    AssistantText,
    Notice,
    RunResult,
    SessionStart,
    ToolCall,
    TurnUsage,
    UserText,
)

WILD = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts" / "wild"
SESSION = "0f9e8d7c-0000-4000-8000-00000000abcd"
CWD = "/home/dev/proj"

INIT = {"type": "system", "subtype": "init", "cwd": CWD, "session_id": SESSION, "tools": []}
RESULT = {"type": "result", "subtype": "success", "is_error": False, "session_id": SESSION}


def said(text: str, **extra: Any) -> dict[str, Any]:
    """An assistant message with one text block."""
    body = {"id": "msg_1", "role": "assistant", "content": [{"type": "text", "text": text}]}
    return {"type": "assistant", "message": body, "session_id": SESSION, **extra}


def logged(kind: str, content: Any, **extra: Any) -> dict[str, Any]:
    """A line of a Claude Code session log: user or assistant, with its envelope."""
    return {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": CWD,
        "sessionId": SESSION,
        "version": "2.1.330",
        "gitBranch": "main",
        "type": kind,
        "message": {"role": kind, "content": content},
        "uuid": "11111111-2222-4333-8444-555555555555",
        "timestamp": "2026-01-02T03:04:05.678Z",
        **extra,
    }


def lines(*values: Any) -> str:
    """JSON lines."""
    return "".join(json.dumps(value) + "\n" for value in values)


def kinds(text: str) -> list[str]:
    """The entry kinds read from ``text``, without per-response usage."""
    entries = read_transcript_text(text).transcript.entries
    return [entry.kind for entry in entries if not isinstance(entry, TurnUsage)]


# -- shapes --------------------------------------------------------------------------------


def test_a_pretty_printed_array_reads_like_the_same_messages_as_lines() -> None:
    """claude-code-action's execution file: one JSON array, indented, of the same messages."""
    messages = [INIT, said("PHASE 1 COMPLETE: done"), RESULT]

    array = read_transcript_text(json.dumps(messages, indent=2))
    as_lines = read_transcript_text(lines(*messages))

    assert array.transcript == as_lines.transcript
    assert array.stats.shape == "json-array"
    assert as_lines.stats.shape == "json-lines"
    assert (array.stats.understood, array.stats.skipped) == (3, 0)


def test_a_one_line_array_of_objects_is_an_array() -> None:
    """Shape comes from content: a compact array on one line is still an array."""
    parsed = read_transcript_text(json.dumps([INIT, RESULT]))

    assert parsed.stats.shape == "json-array"
    assert kinds(json.dumps([INIT, RESULT])) == ["session", "result"]


def test_json_lines_whose_first_line_is_an_array_are_still_lines() -> None:
    """The whole text must be one array: a first line that is one is just a foreign line."""
    text = "[1, 2]\n" + lines(INIT, RESULT)

    parsed = read_transcript_text(text)

    assert parsed.stats.shape == "json-lines"
    assert (parsed.stats.understood, parsed.stats.unrecognised) == (2, 1)
    assert (parsed.stats.example, parsed.stats.example_at) == ("[1, 2]", 1)


def test_an_array_holding_something_other_than_objects_is_read_as_lines() -> None:
    """An array of objects is an execution file; an array of anything else is not."""
    text = json.dumps([INIT, 5, RESULT], indent=2)

    parsed = read_transcript_text(text)

    assert parsed.stats.shape == "json-lines"
    assert parsed.stats.understood == 0
    assert parsed.stats.not_json > 0


@pytest.mark.parametrize("prefix", ["\ufeff", "\n\n  \t"])
def test_a_byte_order_mark_or_leading_blank_space_does_not_hide_the_shape(prefix: str) -> None:
    """Windows editors write a BOM; files may start with blank lines."""
    assert read_transcript_text(prefix + json.dumps([INIT])).stats.shape == "json-array"
    assert kinds(prefix + lines(INIT, RESULT)) == ["session", "result"]


def test_a_line_separator_inside_a_json_string_does_not_split_the_line() -> None:
    """JSON may hold U+2028 unescaped (JavaScript writes it so); only \\n ends a line."""
    text = json.dumps(said("one\u2028two"), ensure_ascii=False) + "\r\n"

    parsed = read_transcript_text(text)

    assert parsed.stats.skipped == 0
    assert AssistantText(text="one\u2028two") in parsed.transcript.entries


# -- what is understood, ignored or unrecognised -------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        {"type": "stream_event", "event": {"type": "content_block_delta"}, "session_id": SESSION},
        {"type": "system", "subtype": "hook_started", "hook_event": "Stop", "session_id": SESSION},
        {"type": "system", "subtype": "hook_response", "outcome": "success"},
        {"type": "system", "subtype": "thinking_tokens"},
        {"type": "system", "subtype": "status", "status": "requesting"},
        {"type": "rate_limit_event", "rate_limit_info": {"status": "allowed"}},
        {"type": "summary", "summary": "Fixing a bug", "leafUuid": "u-1"},
        {"type": "file-history-snapshot", "messageId": "m-1", "snapshot": {}},
        {"type": "a-line-type-from-a-later-version", "sessionId": SESSION},
    ],
)
def test_claude_code_lines_with_nothing_to_judge_are_ignored_silently(line: Any) -> None:
    """Partial deltas, hooks, rate limits and log bookkeeping: counted as ignored, not skipped."""
    parsed = read_transcript_text(lines(INIT, line, RESULT))

    assert (parsed.stats.ignored, parsed.stats.skipped) == (1, 0)
    assert parsed.stats.example is None


@pytest.mark.parametrize(
    "line",
    [
        {"event": "run.started", "run_id": "r-1"},
        {"type": "response_item", "payload": {"role": "assistant"}},
        {"type": "assistant", "message": "not a message object"},
        {"type": "system"},
        [1, 2, 3],
        "text",
        42,
        None,
    ],
)
def test_valid_json_that_is_not_a_claude_code_message_is_counted_with_an_example(
    line: Any,
) -> None:
    """Foreign JSON is unrecognised: counted, and the first one kept as the example."""
    parsed = read_transcript_text(lines(INIT, line, RESULT))

    assert (parsed.stats.unrecognised, parsed.stats.not_json) == (1, 0)
    assert parsed.stats.example == json.dumps(line)
    assert parsed.stats.example_at == 2
    assert kinds(lines(INIT, line, RESULT)) == ["session", "result"]


def test_the_example_is_one_shortened_line_and_arrays_count_elements() -> None:
    """A long pretty-printed element becomes one line of at most EXAMPLE_LIMIT characters."""
    foreign = {"event": "x" * 500, "nested": {"deep": [1, 2, 3]}}

    stats = read_transcript_text(json.dumps([INIT, RESULT, foreign], indent=2)).stats

    assert stats.shape == "json-array"
    assert stats.example_at == 3
    assert stats.example is not None
    assert len(stats.example) == EXAMPLE_LIMIT
    assert "\n" not in stats.example
    assert stats.example.startswith('{ "event": "xxx')
    assert stats.example.endswith("…")


def test_lines_that_are_not_json_are_counted_apart() -> None:
    """Broken lines are not_json, foreign JSON is unrecognised; both are skipped."""
    parsed = read_transcript_text(lines(INIT) + "not json\n{broken\n" + lines({"a": 1}))

    assert (parsed.stats.not_json, parsed.stats.unrecognised, parsed.stats.skipped) == (2, 1, 3)
    assert parsed.stats.example_at == 4


# -- Claude Code session logs --------------------------------------------------------------


def test_a_session_log_gets_its_session_start_from_the_first_cwd() -> None:
    """Session logs have no system/init line: the working directory comes from ``cwd``."""
    text = lines(
        {"type": "summary", "summary": "Fix", "leafUuid": "u-9"},
        logged("user", "Fix app.py"),
        logged("assistant", [{"type": "text", "text": "PHASE 1 COMPLETE: done"}]),
    )

    parsed = read_transcript_text(text)

    assert parsed.transcript.entries[0] == SessionStart(cwd=CWD, session_id=SESSION)
    assert parsed.transcript.cwd == CWD
    assert kinds(text) == ["session", "user", "assistant"]
    assert (parsed.stats.understood, parsed.stats.ignored) == (2, 1)


def test_sidechain_lines_of_a_session_log_are_not_the_models_own_text() -> None:
    """A subagent's text (isSidechain) is a Notice; its tool calls are still calls, made by
    a subagent (an old log's sidechain line names none: ``sidechain``)."""
    text = lines(
        logged("user", "Fix app.py"),
        logged(
            "assistant",
            [
                {"type": "text", "text": "PHASE 1 COMPLETE: done"},
                {"type": "tool_use", "id": "toolu_9", "name": "Read", "input": {}},
            ],
            isSidechain=True,
        ),
    )

    entries = read_transcript_text(text).transcript.entries

    assert Notice(text="PHASE 1 COMPLETE: done") in entries
    assert not any(isinstance(e, AssistantText) for e in entries)
    assert ToolCall(id="toolu_9", name="Read", input={}, agent=AgentRef(id="sidechain")) in entries


def test_a_stream_json_session_start_is_not_doubled_by_cwd_on_later_lines() -> None:
    """Only a transcript without a session start gets one made from ``cwd``."""
    entries = read_transcript_text(lines(INIT, logged("user", "hi"))).transcript.entries

    assert [type(e) for e in entries] == [SessionStart, UserText]


# -- the recorded transcripts from the wild ------------------------------------------------


@pytest.mark.parametrize(
    "name", ["execution_file.json", "partial_messages.jsonl", "windows_run.jsonl"]
)
def test_a_recorded_run_reads_the_same_in_every_shape_it_was_kept_in(name: str) -> None:
    """The same run as stream-json lines, execution file, partial capture and Windows run."""
    reference = kinds((WILD / "stream_json.jsonl").read_text())

    parsed = read_transcript_text((WILD / name).read_text())

    assert parsed.stats.skipped == 0
    assert kinds((WILD / name).read_text()) == reference


def test_the_recorded_session_log_reads_as_the_conversation_it_holds() -> None:
    """Its bookkeeping is ignored; the prompt, calls, results and answer are read."""
    parsed = read_transcript_text((WILD / "session_log.jsonl").read_text())
    entries = parsed.transcript.entries

    assert parsed.stats.skipped == 0
    assert parsed.stats.ignored > parsed.stats.understood
    assert parsed.transcript.cwd == "/work/project"
    assert [e.name for e in entries if isinstance(e, ToolCall)] == ["Read", "Read", "Edit"]
    assert not any(isinstance(e, RunResult) for e in entries)  # a log has no result line
    (answer,) = [e for e in entries if isinstance(e, AssistantText) and "PHASE 1" in e.text]
    assert answer.text.startswith("PHASE 1 COMPLETE: Files have been edited")
