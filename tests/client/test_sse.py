"""The SSE parser (phasegate.client.sse): the event-stream format, fed in arbitrary chunks."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from phasegate.client.errors import ServiceError
from phasegate.client.sse import SSEEvent, SSEParser
from phasegate.errors import PhasegateError
from tests.helpers.fuzz import bounded_memory, hostile_text

STREAM = (
    b": ping\n"
    b"retry: 2500\n"
    b'id: 1\nevent: run.started\ndata: {"a": 1}\n\n'
    b"id: 2\r\nevent: phase.started\r\ndata: line one\r\ndata: line two\r\n\r\n"
    b"id: 3\revent: done\rdata:no space\r\r"
)
EXPECTED = [
    SSEEvent(event="run.started", data='{"a": 1}', id="1"),
    SSEEvent(event="phase.started", data="line one\nline two", id="2"),
    SSEEvent(event="done", data="no space", id="3"),
]


def feed_all(chunks: list[bytes] | list[str], parser: SSEParser | None = None) -> list[SSEEvent]:
    """Every event the chunks complete, in order."""
    parser = parser or SSEParser()
    return [event for chunk in chunks for event in parser.feed(chunk)]


def test_events_come_with_id_name_and_joined_data_whatever_the_line_ends() -> None:
    """LF, CRLF and CR all end lines; data lines join with newlines; comments are skipped."""
    parser = SSEParser()
    assert feed_all([STREAM], parser) == EXPECTED
    assert parser.retry == 2500
    assert parser.last_event_id == "3"


def test_a_stream_split_byte_by_byte_gives_the_same_events() -> None:
    """A chunk may end anywhere: between a CR and its LF, inside a UTF-8 character."""
    text = STREAM + "id: 4\ndata: caf\u00e9 \u2713\n\n".encode()
    events = feed_all([text[i : i + 1] for i in range(len(text))])
    assert events == [*EXPECTED, SSEEvent(event="message", data="caf\u00e9 \u2713", id="4")]


def test_a_crlf_split_between_two_chunks_is_one_line_end() -> None:
    """The LF after a CR that ended the previous chunk does not end an empty line (which
    would dispatch the event early)."""
    parser = SSEParser()
    assert parser.feed(b"data: a\r") == []
    assert parser.feed(b"\ndata: b\r") == []
    assert parser.feed(b"\n\r\n") == [SSEEvent(event="message", data="a\nb")]


def test_an_unfinished_event_is_not_dispatched() -> None:
    """Only an empty line dispatches: a stream cut mid-event yields nothing for it."""
    assert feed_all([b"id: 9\ndata: half"]) == []
    assert feed_all([b"id: 9\ndata: whole\n"]) == []


def test_a_block_without_data_dispatches_nothing_but_sets_the_last_event_id() -> None:
    """``id`` alone moves the last event id; later events keep it until another id line."""
    parser = SSEParser()
    assert parser.feed("id: 7\nevent: ignored\n\ndata: x\n\n") == [
        SSEEvent(event="message", data="x", id="7")
    ]
    assert parser.last_event_id == "7"


def test_odd_fields_follow_the_standard() -> None:
    """A line without a colon is a field with an empty value; only one leading space is
    cut; unknown fields, an id with NUL and a retry that is not digits are ignored; an empty
    data line still makes an event; a leading byte-order mark is dropped."""
    parser = SSEParser()
    events = parser.feed(
        "\ufeffdata\n\n"
        "data:  two spaces\nfoo: bar\nid: a\0b\nretry: 12x\nretry: -1\n\n"
        "id: 5\nevent\ndata: named nothing\n\n"
    )
    assert events == [
        SSEEvent(event="message", data=""),
        SSEEvent(event="message", data=" two spaces"),
        SSEEvent(event="message", data="named nothing", id="5"),
    ]
    assert parser.retry is None


def test_invalid_utf8_is_replaced_not_raised() -> None:
    """Broken bytes become U+FFFD; the stream goes on."""
    assert feed_all([b"data: \xff\xfe ok\n\n"]) == [
        SSEEvent(event="message", data="\ufffd\ufffd ok")
    ]


def test_an_event_over_the_size_limit_is_a_service_error() -> None:
    """A stream that never ends its line (or its event) cannot make the parser grow without
    bound: past the limit it is a ServiceError, not memory spent."""
    parser = SSEParser(max_event_size=100)
    for _ in range(10):
        parser.feed(b"x" * 10)
    with pytest.raises(ServiceError, match="passes 100 characters") as raised:
        parser.feed(b"x")
    assert raised.value.code == "event_too_large"
    with pytest.raises(ServiceError):
        SSEParser(max_event_size=100).feed(b"data: 1234567890\n" * 20)


def test_a_huge_retry_value_is_ignored() -> None:
    """A retry longer than any sane delay is nonsense, ignored like one with letters."""
    parser = SSEParser()
    parser.feed("retry: " + "9" * 5000 + "\n")
    assert parser.retry is None


def _chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(cut, len(data)) for cut in cuts})
    bounds = [0, *points, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


_stream_bytes = st.one_of(
    st.binary(max_size=600),
    hostile_text.map(lambda text: text.encode("utf-8", errors="surrogatepass")),
    st.lists(
        st.sampled_from(
            [
                b"data: x",
                b"id: 3",
                b"event: e",
                b"retry: 10",
                b":",
                b"\r",
                b"\n",
                b"\r\n",
                b"\xe2\x9c",
            ]
        ),
        max_size=60,
    ).map(b"".join),
)


@pytest.mark.fuzz
@given(data=_stream_bytes, cuts=st.lists(st.integers(min_value=0, max_value=600), max_size=12))
def test_fuzzed_streams_parse_the_same_in_any_chunks_and_raise_only_our_errors(
    data: bytes, cuts: list[int]
) -> None:
    """Any bytes, cut anywhere: the events equal those of the stream fed whole, and nothing
    escapes but phasegate's own errors, within the memory bound."""
    with bounded_memory():
        try:
            whole = SSEParser(max_event_size=200)
            expected = whole.feed(data)
            parser = SSEParser(max_event_size=200)
            assert feed_all(_chunked(data, cuts), parser) == expected
            assert (parser.retry, parser.last_event_id) == (whole.retry, whole.last_event_id)
        except PhasegateError:
            pass
