"""Splitting a run's tokens and cost among its parts: every response counted once, at its
final count, and the parts plus the unattributed share equal the run's total."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from phasegate.evidence.saved_transcript import parse_stream_json
from phasegate.evidence.stream_json import MessageReader
from phasegate.evidence.transcript import (
    AssistantText,
    Entry,
    RunResult,
    Transcript,
    TurnUsage,
    Usage,
)
from phasegate.evidence.usage_split import PRICE_WEIGHTS, price_weight, split_cost, split_usage

COUNTS = tuple(PRICE_WEIGHTS)


def usage(**counts: int) -> Usage:
    """A usage with these token counts and no cost."""
    return Usage(**counts)


def start(message_id: str, parent: str | None = None, **counts: int) -> dict[str, Any]:
    """A ``message_start`` partial message."""
    body = {"id": message_id, "usage": {"input_tokens": 100, "output_tokens": 1, **counts}}
    return {
        "type": "stream_event",
        "event": {"type": "message_start", "message": body},
        "parent_tool_use_id": parent,
    }


def delta(parent: str | None = None, **counts: int) -> dict[str, Any]:
    """A ``message_delta`` partial message with these (cumulative) counts."""
    return {
        "type": "stream_event",
        "event": {"type": "message_delta", "usage": counts},
        "parent_tool_use_id": parent,
    }


def assistant(message_id: str, text: str, parent: str | None = None) -> dict[str, Any]:
    """One content block of a response, with the usage of its start (as Claude Code sends)."""
    return {
        "type": "assistant",
        "parent_tool_use_id": parent,
        "message": {
            "id": message_id,
            "usage": {"input_tokens": 100, "output_tokens": 1},
            "content": [{"type": "text", "text": text}],
        },
    }


def test_a_responses_final_usage_comes_from_its_message_delta() -> None:
    """The delta's output count replaces the start's 1; the input count stays the start's."""
    reader = MessageReader()
    entries = [
        entry
        for message in (start("m1"), assistant("m1", "a"), delta(output_tokens=38))
        for entry in reader.entries(message)
    ]
    (response,) = Transcript(entries=tuple(entries)).responses()
    assert response.usage == usage(input_tokens=100, output_tokens=38)
    assert response.exact and response.message_id == "m1"
    assert response.position == 0  # where the response started: its first block


def test_a_delta_that_repeats_the_input_counts_replaces_them() -> None:
    """The API may send cumulative input and cache counts in the delta too."""
    reader = MessageReader()
    reader.entries(start("m1"))
    (final,) = reader.entries(delta(output_tokens=5, input_tokens=120, cache_read_input_tokens=7))
    assert isinstance(final, TurnUsage) and final.final
    assert final.usage == usage(input_tokens=120, output_tokens=5, cache_read_input_tokens=7)


def test_a_subagents_response_is_told_apart_from_the_sessions_by_its_parent() -> None:
    """Streams interleave: each delta closes the response of its own stream."""
    reader = MessageReader()
    messages = [
        start("main"),
        start("sub", parent="toolu_1"),
        delta(parent="toolu_1", output_tokens=9),
        delta(output_tokens=40),
    ]
    finals = [e for m in messages for e in reader.entries(m) if isinstance(e, TurnUsage)]
    assert [(f.message_id, f.usage.output_tokens) for f in finals] == [("sub", 9), ("main", 40)]


def test_a_subagents_tokens_count_although_its_text_is_never_the_models_answer() -> None:
    """A subagent's text is a notice, but the tokens it used are spent all the same."""
    entries = MessageReader().entries(assistant("sub", "PHASE 1 COMPLETE: x", parent="toolu_1"))
    assert not any(isinstance(e, AssistantText) for e in entries)
    assert any(isinstance(e, TurnUsage) and e.message_id == "sub" for e in entries)


def test_without_a_final_count_a_response_counts_the_largest_it_reported() -> None:
    """A session log repeats a response per block; its counts may grow; none is final."""
    entries: tuple[Entry, ...] = (
        TurnUsage(message_id="m1", usage=usage(input_tokens=10, output_tokens=1)),
        TurnUsage(message_id="m1", usage=usage(input_tokens=10, output_tokens=30)),
    )
    (response,) = Transcript(entries=entries).responses()
    assert response.usage == usage(input_tokens=10, output_tokens=30)
    assert not response.exact


def test_a_saved_stream_with_partial_messages_is_read_with_final_counts() -> None:
    """A stream-json file written with partial messages gives exact per-response usage."""
    lines = [json.dumps(m) for m in (start("m1"), assistant("m1", "hi"), delta(output_tokens=8))]
    parsed = parse_stream_json(lines)
    (response,) = parsed.transcript.responses()
    assert (response.usage.output_tokens, response.exact) == (8, True)


def test_side_requests_the_results_count_are_unattributed() -> None:
    """Results that count more than the responses: the rest is its own figure."""
    entries: tuple[Entry, ...] = (
        TurnUsage(message_id="m1", usage=usage(input_tokens=100, output_tokens=40), final=True),
        TurnUsage(message_id="m2", usage=usage(input_tokens=100, output_tokens=60), final=True),
        RunResult(usage=Usage(input_tokens=250, output_tokens=110, cost_usd=0.01)),
    )
    split = split_usage(Transcript(entries=entries), lambda position: position, 2)
    assert [p.output_tokens for p in split.parts] == [40, 60]
    assert split.unattributed.input_tokens == 50 and split.unattributed.output_tokens == 10
    assert split.total.input_tokens == 250 and split.total.cost_usd == 0.01


def test_a_session_that_died_before_its_result_still_counts_its_responses() -> None:
    """No result: the run's tokens are the responses', nothing is unattributed."""
    entries: tuple[Entry, ...] = (
        TurnUsage(message_id="m1", usage=usage(input_tokens=100, output_tokens=40), final=True),
    )
    split = split_usage(Transcript(entries=entries), lambda position: 0, 1)
    assert split.total == usage(input_tokens=100, output_tokens=40)
    assert split.unattributed == Usage()
    assert split.parts[0].cost_usd is None


def test_a_cost_reported_without_tokens_is_unattributed() -> None:
    """A budget stop can report a cost and no usage: nobody's tokens can carry it."""
    entries: tuple[Entry, ...] = (RunResult(usage=Usage(cost_usd=0.00118)),)
    split = split_usage(Transcript(entries=entries), lambda position: 0, 2)
    assert [p.cost_usd for p in split.parts] == [0.0, 0.0]
    assert split.unattributed.cost_usd == pytest.approx(0.00118)


def test_cost_is_shared_by_price_weighted_tokens() -> None:
    """An output token weighs five input tokens: 100 out against 500 in is half and half."""
    shares = split_cost(0.002, [usage(output_tokens=100), usage(input_tokens=500)])
    assert shares == [0.001, 0.001]
    assert price_weight(usage(cache_read_input_tokens=10, cache_creation_input_tokens=4)) == 6.0


def test_rounded_shares_add_up_to_the_rounded_cost() -> None:
    """Three equal shares of a cent: 3334 + 3333 + 3333 millionths, not 3 x 3333."""
    shares = split_cost(0.01, [usage(input_tokens=1)] * 3)
    assert sorted(s or 0.0 for s in shares) == [0.003333, 0.003333, 0.003334]


_usages = st.builds(
    Usage,
    input_tokens=st.integers(0, 10**6),
    output_tokens=st.integers(0, 10**5),
    cache_creation_input_tokens=st.integers(0, 10**5),
    cache_read_input_tokens=st.integers(0, 10**6),
)
_entries = st.one_of(
    st.builds(
        TurnUsage,
        message_id=st.one_of(st.none(), st.sampled_from(["m1", "m2", "m3", "m4"])),
        usage=_usages,
        final=st.booleans(),
    ),
    st.builds(
        RunResult,
        usage=st.builds(
            Usage,
            input_tokens=st.integers(0, 10**6),
            output_tokens=st.integers(0, 10**6),
            cost_usd=st.one_of(st.none(), st.floats(0, 50, allow_nan=False)),
        ),
    ),
    st.builds(AssistantText, text=st.just("text")),
)


@given(
    entries=st.lists(_entries, max_size=30),
    parts=st.integers(1, 5),
    owners=st.lists(st.one_of(st.none(), st.integers(-1, 6)), min_size=30, max_size=30),
)
def test_for_any_transcript_the_parts_and_the_rest_add_up_to_the_run(
    entries: list[Entry], parts: int, owners: list[int | None]
) -> None:
    """Whatever the responses, results and owners: every count sums, every response is
    counted once, and the costs sum to the run's within a millionth of a dollar per share."""
    transcript = Transcript(entries=tuple(entries))
    split = split_usage(transcript, owners.__getitem__, parts)
    assert len(split.parts) == parts
    for name in COUNTS:
        shares = sum(getattr(p, name) for p in split.parts) + getattr(split.unattributed, name)
        assert shares == getattr(split.total, name)
        responses = sum(getattr(r.usage, name) for r in transcript.responses())
        assert getattr(split.total, name) == max(
            responses, getattr(transcript.result_usage(), name)
        )
    cost = transcript.result_usage().cost_usd
    assert split.total.cost_usd == cost
    costs = [p.cost_usd for p in (*split.parts, split.unattributed)]
    if cost is None:
        assert costs == [None] * (parts + 1)
    else:
        assert all(c is not None and c >= 0 for c in costs)
        assert sum(c or 0.0 for c in costs) == pytest.approx(round(cost, 6), abs=1e-9)


def test_a_delta_whose_start_was_not_seen_adds_nothing() -> None:
    """A cut transcript: without its start the delta cannot name its response, and a
    response of its own would count its tokens twice."""
    assert MessageReader().entries(delta(output_tokens=38)) == []
