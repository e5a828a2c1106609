"""ServiceClient (phasegate.client) against a fake service: httpx's MockTransport answers
as ``phasegate serve`` would, so every request and reconnect is seen."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from phasegate.client import ServiceClient, ServiceError, ServiceEvent, bodies
from phasegate.errors import UsageError
from tests.helpers.service_runs import RUN_ID, accepted_run_lines, run_info, sse_frames

BASE = "http://127.0.0.1:8080"
T = TypeVar("T")
Handler = Callable[[httpx.Request], httpx.Response]


def call(
    make: Callable[[ServiceClient], Coroutine[Any, Any, T]], handler: Handler, **options: Any
) -> T:
    """Run ``make(client)`` with a client whose service is ``handler``."""

    async def main() -> T:
        transport = httpx.MockTransport(handler)
        options.setdefault("backoff", 0)
        async with ServiceClient(BASE, "s3cret", transport=transport, **options) as client:
            return await make(client)

    return asyncio.run(main())


async def collect(events: AsyncIterator[ServiceEvent]) -> list[ServiceEvent]:
    """Every event of an iterator, in order."""
    return [event async for event in events]


def stream(frames: list[bytes], cut: Exception | None = None) -> httpx.Response:
    """An SSE response sending ``frames``, then dropping the connection with ``cut``."""

    async def body() -> AsyncIterator[bytes]:
        for frame in frames:
            yield frame
        if cut is not None:
            raise cut

    return httpx.Response(200, headers={"Content-Type": "text/event-stream"}, content=body())


def test_start_posts_the_request_as_json_with_the_bearer_token_and_idempotency_key() -> None:
    """Only the fields given go out; the answer is the run, parsed into RunInfo."""
    seen: list[httpx.Request] = []

    def service(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(202, json=run_info(status="queued"), headers={"Location": "/x"})

    info = call(
        lambda c: c.start(
            task="tasks/fix.yaml",
            workdir=Path("project"),
            mode="gate",
            copy_workdir=True,
            idempotency_key="k-1",
        ),
        service,
    )
    assert (info.id, info.status, info.links.events) == (
        RUN_ID,
        "queued",
        f"/v1/runs/{RUN_ID}/events",
    )
    (request,) = seen
    assert (request.method, request.url.path) == ("POST", "/v1/runs")
    assert request.headers["Authorization"] == "Bearer s3cret"
    assert request.headers["Idempotency-Key"] == "k-1"
    assert request.headers["Content-Type"] == "application/json"
    assert json.loads(request.content) == {
        "task": "tasks/fix.yaml", "workdir": "project", "mode": "gate", "copy_workdir": True,
    }  # fmt: skip


def test_a_request_the_schema_refuses_is_a_usage_error_before_anything_is_sent() -> None:
    """Both a task and a pipeline: refused locally, naming the problem; no request made."""
    seen: list[httpx.Request] = []

    def service(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(500)

    with pytest.raises(UsageError, match="exactly one of task and pipeline"):
        call(lambda c: c.start(task="t.yaml", pipeline="p.yaml", workdir="w"), service)
    with pytest.raises(UsageError, match="max_attempts") as raised:
        call(lambda c: c.start(task="t.yaml", workdir="w", max_attempts=0), service)
    assert raised.value.option == "max_attempts"
    assert seen == []


def _error(code: str, message: str, field: str | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "field": field}}


@pytest.mark.parametrize(
    ("status", "body", "code", "field", "advice"),
    [
        (401, _error("unauthorized", "missing or wrong token"), "unauthorized", None, "token file"),
        (
            403,
            _error("forbidden_host", "Host evil.test is not allowed"),
            "forbidden_host",
            None,
            "DNS rebinding",
        ),
        (
            400,
            _error("path_escapes_root", "resolves outside the root", "workdir"),
            "path_escapes_root",
            "workdir",
            None,
        ),
        (404, _error("not_found", "no run 0123456789ab"), "not_found", None, "runs()"),
        (409, _error("run_ended", "the run already ended"), "run_ended", None, "resumable"),
        (413, _error("body_too_large", "over 1 MiB"), "body_too_large", None, "file path"),
        (
            422,
            _error("idempotency_key_reused", "another body", "Idempotency-Key"),
            "idempotency_key_reused",
            "Idempotency-Key",
            "fix the field",
        ),
        (
            422,
            {
                "detail": [
                    {
                        "loc": ["body", "timeout"],
                        "msg": "Input should be greater than 0",
                        "type": "greater_than",
                    }
                ]
            },
            "invalid_request",
            "timeout",
            None,
        ),
        (500, {"detail": "Internal Server Error"}, "error", None, "its log"),
    ],
)
def test_error_answers_become_service_errors_with_the_fields_and_what_to_do(
    status: int, body: dict[str, Any], code: str, field: str | None, advice: str | None
) -> None:
    """The status, the service's code, message and field are kept; the text says what to do;
    a refused request is a usage error (exit 2), a failing service exit 3."""
    with pytest.raises(ServiceError) as raised:
        call(lambda c: c.get(RUN_ID), lambda _: httpx.Response(status, json=body))
    error = raised.value
    assert (error.status_code, error.code, error.field) == (status, code, field)
    assert error.message in str(error)
    assert f"({status} {code})" in str(error)
    if advice:
        assert advice in str(error)
    assert error.exit_code == (2 if status < 500 else 3)


def test_an_unreachable_service_is_a_service_error_that_says_what_to_check() -> None:
    """A refused connection: no status, code ``unreachable``, the URL and the advice."""

    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    with pytest.raises(
        ServiceError, match=r"cannot reach the service at http://127\.0\.0\.1:8080"
    ) as raised:
        call(lambda c: c.get(RUN_ID), down)
    assert (raised.value.status_code, raised.value.code) == (None, "unreachable")
    assert "is it running" in str(raised.value)


def test_events_are_parsed_and_the_stream_stops_after_done() -> None:
    """Ids are numbers, data the parsed log line; nothing after ``done`` is read."""
    lines = accepted_run_lines()
    frames = [b": ping\n\n", *sse_frames(lines), b"id: 99\nevent: late\ndata: {}\n\n"]
    events = call(lambda c: collect(c.events(RUN_ID)), lambda _: stream(frames))
    assert [event.id for event in events] == list(range(1, len(lines) + 1))
    assert [event.data for event in events] == [json.loads(line) for line in lines]
    assert events[-1] == ServiceEvent(id=len(lines), event="done", data=json.loads(lines[-1]))


def test_a_stream_cut_after_event_3_reconnects_with_last_event_id_and_yields_each_event_once() -> (
    None
):
    """The first connection drops after event 3; the second asks from after 3. The fake
    service replays from 2 (an overlap): events 2 and 3 are not yielded again."""
    frames = sse_frames(accepted_run_lines())
    asked: list[str | None] = []

    def service(request: httpx.Request) -> httpx.Response:
        asked.append(request.headers.get("Last-Event-ID"))
        assert request.headers["Authorization"] == "Bearer s3cret"
        if len(asked) == 1:
            return stream(frames[:3], cut=httpx.ReadError("connection reset"))
        return stream(frames[1:])

    events = call(lambda c: collect(c.events(RUN_ID)), service)
    assert asked == [None, "3"]
    assert [event.id for event in events] == list(range(1, len(frames) + 1))


def test_a_stream_that_ends_before_done_reconnects_and_waits_the_retry_it_asked_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A clean close without ``done`` (the service restarting) is a drop too; the delay
    before reconnecting is the stream's ``retry:`` (milliseconds)."""
    frames = sse_frames(accepted_run_lines())
    delays: list[float] = []

    async def no_wait(delay: float) -> None:
        delays.append(delay)

    monkeypatch.setattr(asyncio, "sleep", no_wait)
    calls = iter([stream([b"retry: 1500\n\n", *frames[:5]]), stream(frames[5:])])
    events = call(lambda c: collect(c.events(RUN_ID, last_event_id=2)), lambda _: next(calls))
    assert [event.id for event in events] == list(range(3, len(frames) + 1))
    assert delays == [1.5]


def test_reconnects_are_bounded_and_the_error_says_where_to_continue() -> None:
    """A stream that keeps dropping: after max_reconnects tries in a row, a ServiceError
    naming the last event yielded."""
    frames = sse_frames(accepted_run_lines())
    tries = 0

    def flaky(request: httpx.Request) -> httpx.Response:
        nonlocal tries
        tries += 1
        if tries == 1:
            return stream(frames[:4], cut=httpx.RemoteProtocolError("peer closed"))
        raise httpx.ConnectError("refused", request=request)

    got: list[ServiceEvent] = []

    async def follow(client: ServiceClient) -> None:
        async for event in client.events(RUN_ID):
            got.append(event)

    with pytest.raises(ServiceError, match="dropped 3 times in a row") as raised:
        call(follow, flaky, max_reconnects=2)
    assert tries == 3
    assert [event.id for event in got] == [1, 2, 3, 4]
    assert raised.value.code == "stream_lost"
    assert "last_event_id=4" in str(raised.value)


def test_an_unknown_run_ends_the_stream_at_once_without_reconnecting() -> None:
    """404 is an answer, not a drop."""
    tries: list[str] = []

    def service(request: httpx.Request) -> httpx.Response:
        tries.append(request.url.path)
        return httpx.Response(404, json=_error("not_found", "no run nope"))

    with pytest.raises(ServiceError, match="no run nope"):
        call(lambda c: collect(c.events("nope")), service)
    assert tries == ["/v1/runs/nope/events"]


def test_wait_follows_the_events_to_done_then_returns_the_run_with_its_report() -> None:
    """The final RunInfo comes from GET after ``done``."""
    frames = sse_frames(accepted_run_lines())
    report = {"verdict": "accepted", "phases": []}

    def service(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/events"):
            return stream(frames)
        return httpx.Response(200, json=run_info(report=report, future_field=1))

    info = call(lambda c: c.wait(RUN_ID), service)
    assert (info.status, info.verdict, info.report) == ("finished", "accepted", report)


def test_runs_iterates_every_page_with_the_filter_and_page_size() -> None:
    """``next_cursor`` is followed until the last page."""
    pages = {
        None: {"runs": [run_info("a" * 12), run_info("b" * 12)], "next_cursor": "c2"},
        "c2": {"runs": [run_info("c" * 12)], "next_cursor": None},
    }
    queries: list[dict[str, str]] = []

    def service(request: httpx.Request) -> httpx.Response:
        queries.append(dict(request.url.params))
        return httpx.Response(200, json=pages[request.url.params.get("cursor")])

    async def all_runs(client: ServiceClient) -> list[str]:
        return [run.id async for run in client.runs(status="finished", limit=2)]

    assert call(all_runs, service) == ["a" * 12, "b" * 12, "c" * 12]
    assert queries == [
        {"status": "finished", "limit": "2"},
        {"status": "finished", "limit": "2", "cursor": "c2"},
    ]


def test_cancel_and_resume_post_to_the_run_and_return_it() -> None:
    """Each is one POST with the token; the answer is the run."""
    seen: list[tuple[str, str]] = []

    def service(request: httpx.Request) -> httpx.Response:
        seen.append((request.method, request.url.path))
        status = "cancelled" if request.url.path.endswith("cancel") else "queued"
        return httpx.Response(200, json=run_info(status=status, resumable=False))

    assert call(lambda c: c.cancel(RUN_ID), service).status == "cancelled"
    assert call(lambda c: c.resume(RUN_ID), service).status == "queued"
    assert seen == [("POST", f"/v1/runs/{RUN_ID}/cancel"), ("POST", f"/v1/runs/{RUN_ID}/resume")]


def test_page_gets_the_runs_page_and_a_run_without_one_is_a_service_error() -> None:
    seen: list[str] = []

    def service(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        if request.url.path.startswith("/v1/runs/bbbbbbbbbbbb"):
            error = {"code": "no_recording", "message": "no recording", "field": None}
            return httpx.Response(404, json={"error": error})
        return httpx.Response(200, text="<!DOCTYPE html><p>page</p>")

    assert call(lambda c: c.page(RUN_ID), service) == "<!DOCTYPE html><p>page</p>"
    with pytest.raises(ServiceError) as raised:
        call(lambda c: c.page("bbbbbbbbbbbb"), service)
    assert raised.value.code == "no_recording"
    assert seen == [f"/v1/runs/{RUN_ID}/view", "/v1/runs/bbbbbbbbbbbb/view"]


def test_the_token_can_come_from_the_token_file_and_a_missing_one_is_named(tmp_path: Path) -> None:
    """The file's content, stripped, is the bearer token; an unreadable file is a usage error
    naming it and the keyword argument."""
    (tmp_path / "token").write_text("from-file\n")
    headers: list[str] = []

    async def health(client: ServiceClient) -> str:
        return (await client.health()).status

    def service(request: httpx.Request) -> httpx.Response:
        headers.append(request.headers["Authorization"])
        return httpx.Response(200, json={"status": "ok", "api_version": "v1"})

    async def main() -> str:
        transport = httpx.MockTransport(service)
        async with ServiceClient(BASE, token_file=tmp_path / "token", transport=transport) as c:
            return await health(c)

    assert asyncio.run(main()) == "ok"
    assert headers == ["Bearer from-file"]
    with pytest.raises(UsageError, match="missing: cannot read the service's token") as raised:
        ServiceClient(BASE, token_file=tmp_path / "missing")
    assert raised.value.option == "token_file"


def test_an_answer_that_breaks_the_schema_is_a_service_error() -> None:
    """A run without its fields is not passed on half-parsed."""
    with pytest.raises(ServiceError, match="breaks the schema") as raised:
        call(lambda c: c.get(RUN_ID), lambda _: httpx.Response(200, json={"id": RUN_ID}))
    assert raised.value.code == "bad_response"


def test_following_an_ended_run_from_after_its_done_ends_without_reconnecting() -> None:
    """The stream has nothing after the given id and closes; the run has ended: the
    iteration ends at once instead of reconnecting until it gives up."""
    asked: list[str] = []

    def service(request: httpx.Request) -> httpx.Response:
        asked.append(request.url.path)
        if request.url.path.endswith("/events"):
            return stream([b": ping\n\n"])
        return httpx.Response(200, json=run_info(status="finished"))

    assert call(lambda c: collect(c.events(RUN_ID, last_event_id=14)), service) == []
    assert asked == [f"/v1/runs/{RUN_ID}/events", f"/v1/runs/{RUN_ID}"]


def test_a_run_with_fields_a_newer_service_added_still_reads() -> None:
    """Answers only ever gain fields: what this client does not know is left out."""
    newer = {**run_info(status="finished"), "priority": 3}
    newer["links"] = {**newer["links"], "artifacts": "/v1/runs/x/artifacts"}
    read = bodies.run_info(newer)
    assert read.status == "finished"
    assert not hasattr(read, "priority")
