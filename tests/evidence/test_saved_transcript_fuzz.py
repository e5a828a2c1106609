"""Fuzzing the transcript reader: any text, any JSON, any shape; no crash, bounded memory."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.helpers.fuzz import bounded_memory, hostile_text

from phasegate.errors import PhasegateError
from phasegate.evidence.saved_transcript import ParsedTranscript, read_transcript_text

JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=6,
)
BLOCKS = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "tool_use", "tool_result", "thinking"]) | JSON_VALUES},
    optional={
        "text": JSON_VALUES,
        "id": st.text(max_size=8) | JSON_VALUES,
        "tool_use_id": st.text(max_size=8) | JSON_VALUES,
        "name": st.sampled_from(["Edit", "Read", "Write"]) | JSON_VALUES,
        "input": st.fixed_dictionaries({}, optional={"file_path": st.text(max_size=30)})
        | JSON_VALUES,
        "content": JSON_VALUES | st.lists(st.fixed_dictionaries({"text": JSON_VALUES})),
        "is_error": JSON_VALUES,
    },
)
MESSAGE_TYPES = st.sampled_from(
    ["system", "assistant", "user", "result", "stream_event", "summary", "attachment"]
)
MESSAGES = st.fixed_dictionaries(
    {"type": MESSAGE_TYPES | JSON_VALUES},
    optional={
        "subtype": st.sampled_from(["init", "success", "hook_started"]) | JSON_VALUES,
        "message": st.fixed_dictionaries(
            {},
            optional={
                "content": st.lists(BLOCKS, max_size=3) | JSON_VALUES,
                "model": st.sampled_from(["<synthetic>", "claude"]) | JSON_VALUES,
                "usage": st.dictionaries(st.sampled_from(["input_tokens"]), JSON_VALUES),
            },
        )
        | JSON_VALUES,
        "parent_tool_use_id": JSON_VALUES,
        "isSidechain": JSON_VALUES,
        "cwd": st.sampled_from(["C:\\Users\\x\\proj", "/srv/p"]) | JSON_VALUES,
        "session_id": JSON_VALUES,
        "sessionId": JSON_VALUES,
        "tools": JSON_VALUES,
        "usage": JSON_VALUES,
        "total_cost_usd": JSON_VALUES,
        "is_error": JSON_VALUES,
        "num_turns": JSON_VALUES,
    },
)
ANY_MESSAGE = MESSAGES | JSON_VALUES


def read(text: str) -> ParsedTranscript | None:
    """Read ``text`` in bounded memory; phasegate's own errors are an allowed outcome."""
    with bounded_memory():
        try:
            return read_transcript_text(text)
        except PhasegateError:
            return None


def assert_counts_fit(parsed: ParsedTranscript | None, pieces: int) -> None:
    """Every message or line is counted at most once."""
    if parsed is None:
        return
    stats = parsed.stats
    counted = stats.understood + stats.ignored + stats.unrecognised + stats.not_json
    assert counted <= pieces


def _separators(text: str) -> int:
    """The most messages ``text`` can hold: one a line, one after each comma, and one per
    closing brace (objects written back to back, ``{}{}``, are two)."""
    return text.count("\n") + 1 + text.count(",") + text.count("}")


@pytest.mark.fuzz
@given(hostile_text)
def test_any_text_is_read_without_a_crash(text: str) -> None:
    """Broken JSON, odd code points, lone brackets: counted, never raised."""
    assert_counts_fit(read(text), _separators(text))


@pytest.mark.fuzz
@given(st.lists(ANY_MESSAGE, max_size=6), st.booleans())
def test_any_json_values_as_lines_or_as_an_array_are_read(
    values: list[Any], as_array: bool
) -> None:
    """Message-like objects and arbitrary JSON, one a line or one pretty-printed array."""
    text = json.dumps(values, indent=2) if as_array else "\n".join(map(json.dumps, values))

    parsed = read(text)

    assert parsed is not None
    if as_array and all(isinstance(value, dict) for value in values):
        assert parsed.stats.shape == "json-array"
        assert parsed.stats.understood + parsed.stats.ignored + parsed.stats.unrecognised == len(
            values
        )
    assert_counts_fit(parsed, len(json.dumps(values, indent=2).splitlines()) + 1)


@pytest.mark.fuzz
@given(st.lists(st.one_of(MESSAGES.map(json.dumps), hostile_text), max_size=6), hostile_text)
def test_mixed_shapes_and_garbage_are_read(pieces: list[str], prefix: str) -> None:
    """Messages, garbage and half an array in one file, after any prefix."""
    text = prefix + "\n".join(pieces)

    assert_counts_fit(read(text), _separators(text))


@pytest.mark.fuzz
@given(st.integers(min_value=1, max_value=50_000), st.sampled_from(["[", "{", '[{"a":']))
def test_deep_nesting_is_read_without_a_crash(depth: int, opener: str) -> None:
    """Unclosed or deeply nested brackets hit no recursion limit outside the reader."""
    parsed = read(opener * depth)

    assert parsed is not None
    assert parsed.stats.understood == 0
