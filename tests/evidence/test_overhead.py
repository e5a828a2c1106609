"""What the gate adds to each request's input: the input carried, its tool definitions once
per request, its text for as long as the session carries it, and the parts adding up."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from phasegate.evidence.overhead import (
    CHARACTERS_PER_TOKEN,
    GateOverhead,
    estimated_tokens,
    split_overhead,
)
from phasegate.evidence.transcript import (
    AssistantText,
    Entry,
    SessionStart,
    Transcript,
    TurnUsage,
    Usage,
    UserText,
)

FIGURES = tuple(GateOverhead.model_fields)


def response(message_id: str, tokens: int = 100, cached: int = 0) -> TurnUsage:
    """A response's final usage: ``tokens`` input, ``cached`` read from the cache."""
    usage = Usage(input_tokens=tokens, cache_read_input_tokens=cached, output_tokens=7)
    return TurnUsage(message_id=message_id, usage=usage, final=True)


def test_each_request_carries_the_tools_once_and_every_gate_text_sent_before_it() -> None:
    """The prompt is carried by every request, the feedback only by those after it; output
    tokens are no input."""
    entries: list[Entry] = [
        UserText(text="prompt"),  # 0: 40 characters of it the gate's
        SessionStart(session_id="s1"),
        response("m1", cached=20),  # 2
        AssistantText(text="working"),
        UserText(text="feedback"),  # 4: 12 characters
        response("m2"),  # 5
    ]
    split = split_overhead(
        Transcript(entries=tuple(entries)),
        lambda position: 0 if position < 4 else 1,
        2,
        gate_text={0: 40, 4: 12},
        tool_characters=10,
    )
    first, second = split.parts
    assert first == GateOverhead(
        requests=1,
        input_tokens=120,
        tool_characters=10,
        text_characters=40,
        tool_tokens=3,
        text_tokens=10,
    )
    assert (second.requests, second.input_tokens, second.text_characters) == (1, 100, 52)
    assert second.text_tokens == 13
    assert split.total == first + second and split.unattributed == GateOverhead()


def test_a_new_session_starts_from_what_opened_it_and_a_resumed_one_keeps_its_context() -> None:
    """Process isolation opens another session: the first stage's prompt is not in it. A
    resume keeps the session id, and everything sent in it."""

    def carried(second_session: str) -> int:
        entries: list[Entry] = [
            UserText(text="stage 1"),
            SessionStart(session_id="s1"),
            response("m1"),
            UserText(text="stage 2"),
            SessionStart(session_id=second_session),
            response("m2"),
        ]
        split = split_overhead(
            Transcript(entries=tuple(entries)),
            lambda position: 0,
            1,
            gate_text={0: 100, 3: 30},
            tool_characters=0,
        )
        return split.total.text_characters - 100  # what the second request carried

    assert carried("s2") == 30
    assert carried("s1") == 130


def test_requests_no_part_owns_are_unattributed() -> None:
    """Unstructured mode: phases have no boundaries, the run still counts every request."""
    entries: list[Entry] = [UserText(text="p"), response("m1"), response("m2")]
    split = split_overhead(
        Transcript(entries=tuple(entries)),
        lambda position: None,
        3,
        gate_text={0: 8},
        tool_characters=0,
    )
    assert all(part.is_zero for part in split.parts)
    assert split.unattributed == split.total
    assert (split.total.requests, split.total.text_characters) == (2, 16)


def test_tokens_are_estimated_at_four_characters_rounded_up() -> None:
    assert CHARACTERS_PER_TOKEN == 4
    assert [estimated_tokens(n) for n in (0, 1, 4, 5, 8, 9)] == [0, 1, 1, 2, 2, 3]


_ENTRY = st.one_of(
    st.builds(UserText, text=st.just("t")),
    st.builds(SessionStart, session_id=st.sampled_from(["a", "b", None])),
    st.builds(
        TurnUsage,
        message_id=st.sampled_from(["m1", "m2", "m3", None]),
        usage=st.builds(
            Usage,
            input_tokens=st.integers(0, 10_000),
            cache_read_input_tokens=st.integers(0, 10_000),
            cache_creation_input_tokens=st.integers(0, 10_000),
        ),
        final=st.booleans(),
    ),
    st.builds(AssistantText, text=st.just("x")),
)


@given(
    entries=st.lists(_ENTRY, max_size=30),
    owners=st.lists(st.one_of(st.none(), st.integers(-1, 3)), min_size=30, max_size=30),
    gate=st.dictionaries(st.integers(0, 29), st.integers(0, 5_000)),
    tools=st.integers(0, 3_000),
)
def test_for_any_transcript_the_parts_and_the_rest_add_up_to_the_run(
    entries: list[Entry], owners: list[int | None], gate: dict[int, int], tools: int
) -> None:
    """Figure by figure, estimates included; one request per response."""
    transcript = Transcript(entries=tuple(entries))
    split = split_overhead(transcript, owners.__getitem__, 3, gate_text=gate, tool_characters=tools)
    for name in FIGURES:
        shares = sum(getattr(part, name) for part in (*split.parts, split.unattributed))
        assert shares == getattr(split.total, name), name
    assert split.total.requests == len(transcript.responses())
    assert split.total.tool_characters == tools * split.total.requests
    assert split.total.input_tokens == sum(
        r.usage.input_tokens + r.usage.cache_read_input_tokens + r.usage.cache_creation_input_tokens
        for r in transcript.responses()
    )
