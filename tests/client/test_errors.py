"""Reading the service's error bodies and events (phasegate.client.errors, .events): any
bytes a broken or hostile server sends become a ServiceError, never another exception."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from phasegate.client.errors import ServiceError, error_from_response
from phasegate.client.events import ServiceEvent, service_event
from phasegate.client.sse import SSEEvent
from tests.helpers.fuzz import bounded_memory, hostile_text

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_bodies = st.one_of(
    hostile_text.map(str.encode),
    st.binary(max_size=200),
    _json_values.map(lambda value: json.dumps(value).encode()),
    _json_values.map(lambda value: json.dumps({"error": value}).encode()),
    _json_values.map(lambda value: json.dumps({"detail": value}).encode()),
)


@pytest.mark.fuzz
@given(status=st.integers(min_value=400, max_value=599), body=_bodies)
def test_any_error_body_becomes_a_service_error_with_its_status(status: int, body: bytes) -> None:
    """Whatever the body, the result is a ServiceError carrying the status and a message."""
    with bounded_memory():
        error = error_from_response(status, body)
    assert isinstance(error, ServiceError)
    assert error.status_code == status
    assert str(error)


@pytest.mark.fuzz
@given(event=st.text(max_size=30), data=hostile_text, id_=hostile_text)
def test_any_sse_event_becomes_a_service_event_or_a_service_error(
    event: str, data: str, id_: str
) -> None:
    """Ids that are not line numbers and data that is not one JSON object are refused as
    ServiceErrors; nothing else escapes."""
    with bounded_memory():
        try:
            parsed: ServiceEvent | ServiceError = service_event(
                SSEEvent(event=event, data=data, id=id_)
            )
        except ServiceError as error:
            parsed = error
    if isinstance(parsed, ServiceError):
        assert parsed.code == "bad_response"
    else:
        assert (parsed.id, parsed.event) == (int(id_), event)
        assert isinstance(parsed.data, dict)


def test_a_well_formed_event_is_its_number_name_and_parsed_line() -> None:
    """The line number becomes an int; the data the parsed JSON object."""
    raw = SSEEvent(event="phase.gate", data='{"event": "phase.gate", "phase": 1}', id="7")
    assert service_event(raw) == ServiceEvent(7, "phase.gate", {"event": "phase.gate", "phase": 1})


def test_too_many_streams_from_this_client_says_to_close_one() -> None:
    body = {"error": {"code": "too_many_streams", "message": "32 event streams open"}}
    error = error_from_response(429, json.dumps(body).encode())
    assert (error.code, error.exit_code) == ("too_many_streams", 2)
    assert "close one, or follow fewer runs at once" in str(error)
