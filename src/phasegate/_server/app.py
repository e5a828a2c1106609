"""The service's routes: FastAPI, its OpenAPI document, and its own Server-Sent Events."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Depends, FastAPI, Header, Query, Request, Response
from fastapi.exception_handlers import request_validation_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.sse import EventSourceResponse, ServerSentEvent
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.responses import HTMLResponse, JSONResponse

from phasegate._server.idempotency import HEADER
from phasegate._server.limits import BodyLimit, StreamLimit
from phasegate._server.live import LiveRun
from phasegate._server.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from phasegate._server.problems import RequestProblem, error_response, storage_failed
from phasegate._server.security import (
    UNAUTHORIZED,
    HostGuard,
    TokenGuard,
    bearer_matches,
    token_matches,
)
from phasegate._server.service import RunService
from phasegate._server.streams import follow, resume_point
from phasegate._server.ui import ui_page
from phasegate._server.views import recorded_page, run_info
from phasegate.client.schema import (
    API_VERSION,
    ErrorBody,
    Health,
    PlanRequest,
    RunInfo,
    RunList,
    RunRequest,
)
from phasegate.errors import LinkedPathError
from phasegate.modes import RunStatus
from phasegate.planning.plan import Plan
from phasegate.recording.page import CSP

_log = logging.getLogger("phasegate.serve")

MAX_BODY_BYTES = 1024 * 1024
"""The largest request body accepted (an inline task or pipeline fits easily)."""

_ERRORS = {code: {"model": ErrorBody} for code in (400, 401, 403, 404, 409, 413, 503)}
_STREAM_ERRORS = {
    code: {"model": ErrorBody, "content": {"application/json": {}}} for code in (*_ERRORS, 429)
}
"""The event stream's errors are JSON, not events: said so, or the document would claim
they come as ``text/event-stream`` like its success."""
_VIEW_RESPONSES = {
    200: {"content": {"text/html": {}}},
    **{code: {"model": ErrorBody, "content": {"application/json": {}}} for code in _ERRORS},
}
"""A recorded run's page is HTML; its errors are JSON, like every other route's."""
_PAGE_HEADERS = {
    # The page's own policy (a meta tag) allows its script by hash; framing can only be
    # refused by a header.
    "Content-Security-Policy": "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
_VIEW_HEADERS = {**_PAGE_HEADERS, "Content-Security-Policy": f"{CSP}; frame-ancestors 'none'"}
"""A recorded run's page: its own policy (no fetch, no script) sent as a header too."""
_bearer = HTTPBearer(auto_error=False, description="The token of the service's token file.")


async def _authorized(
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    request: Request,
) -> None:
    # TokenGuard has checked already, before the body was read; this documents the scheme
    # in the OpenAPI document, and holds should a route ever be mounted outside the guard.
    token: str = request.app.state.token
    if credentials is None or not token_matches(credentials.credentials, token):
        raise RequestProblem(401, "unauthorized", UNAUTHORIZED)


def _live_run(run_id: str, request: Request) -> LiveRun:
    service: RunService = request.app.state.service
    return service.get(run_id)


def create_app(service: RunService, token: str, hosts: frozenset[str]) -> FastAPI:
    """The ASGI app serving ``service``; every ``/v1`` route needs ``token``."""
    app = FastAPI(
        title="phasegate",
        version=API_VERSION,
        description="Run gated tasks and pipelines; follow their events as Server-Sent Events.",
        # The interactive pages would load scripts from elsewhere into the origin whose
        # page keeps the token; the document itself stays at /openapi.json.
        docs_url=None,
        redoc_url=None,
        responses=_ERRORS,  # type: ignore[arg-type]
    )
    # The last added runs first: the Host check, the token, the body, the streams' count.
    settings = service.settings
    app.add_middleware(StreamLimit, per_client=settings.max_streams_per_client,
                       total=settings.max_streams, open_now=service.streams)  # fmt: skip
    app.add_middleware(BodyLimit, max_bytes=MAX_BODY_BYTES)
    app.add_middleware(TokenGuard, token=token)
    app.add_middleware(HostGuard, hosts=hosts)
    app.state.service = service
    app.state.token = token

    v1 = APIRouter(prefix=f"/{API_VERSION}", dependencies=[Depends(_authorized)])

    async def _answer(live: LiveRun) -> RunInfo:
        # A run's answer reads its report from disk: in a thread, off the event loop.
        return await run_in_threadpool(run_info, service, live)

    @v1.post("/runs", status_code=202, response_model=RunInfo)
    async def start_run(
        body: RunRequest,
        response: Response,
        # Checked by the store (a 400 bad_idempotency_key), not here (FastAPI's 422).
        idempotency_key: Annotated[str | None, Header(alias=HEADER)] = None,
    ) -> RunInfo:
        """Start a task or pipeline run; it is queued until a slot is free."""
        live, replayed = await service.submit(body, idempotency_key)
        response.headers["Location"] = f"/{API_VERSION}/runs/{live.record.id}"
        if replayed:
            response.headers["Idempotent-Replayed"] = "true"
        return await _answer(live)

    @v1.post("/plans", response_model=Plan)
    async def make_plan(body: PlanRequest) -> Plan:
        """Plan a task or pipeline for a work directory: what the project shows, what to ask
        (read-only; the same request gives the same plan)."""
        return await run_in_threadpool(service.plan, body)

    @v1.get("/runs", response_model=RunList)
    async def list_runs(
        status: RunStatus | None = None,
        limit: Annotated[int, Query(ge=1, le=500)] = 50,
        cursor: Annotated[str | None, Query(max_length=20)] = None,
    ) -> RunList:
        """Runs, newest first, a page at a time."""
        if cursor is not None and not (cursor.isascii() and cursor.isdigit()):
            raise RequestProblem(400, "bad_cursor", "cursor is the next_cursor of a "
                                 "previous page", field="cursor")  # fmt: skip
        below = int(cursor) if cursor is not None else None
        runs = [
            live for live in sorted(service.runs.values(), key=lambda r: -r.record.seq)
            if (status is None or live.record.status == status)
            and (below is None or live.record.seq < below)
        ]  # fmt: skip
        page = runs[:limit]
        more = len(runs) > limit
        return RunList(
            runs=[run_info(service, live, with_report=False) for live in page],
            next_cursor=str(page[-1].record.seq) if more else None,
        )

    @v1.get("/runs/{run_id}", response_model=RunInfo)
    async def get_run(live: Annotated[LiveRun, Depends(_live_run)]) -> RunInfo:
        """A run's status, and its report once it ended with one."""
        return await _answer(live)

    @v1.get(
        "/runs/{run_id}/events",
        response_class=EventSourceResponse,
        responses=_STREAM_ERRORS,  # type: ignore[arg-type]
    )
    async def run_events(
        live: Annotated[LiveRun, Depends(_live_run)],
        last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
        after: Annotated[int | None, Query(alias="last_event_id", ge=0)] = None,
    ) -> AsyncIterator[ServerSentEvent]:
        """The run's events: those after ``Last-Event-ID`` first, then live, until done."""
        async for line in follow(service.root, live, resume_point(last_event_id, after)):
            yield ServerSentEvent(raw_data=line.text, event=line.event, id=str(line.number))

    @v1.get(
        "/runs/{run_id}/view",
        response_class=HTMLResponse,
        responses=_VIEW_RESPONSES,  # type: ignore[arg-type]
    )
    async def view_run(live: Annotated[LiveRun, Depends(_live_run)]) -> Response:
        """The run's page (one HTML document, no script), when it recorded itself."""
        page = await run_in_threadpool(recorded_page, service, live.record.id)
        return Response(page, media_type="text/html; charset=utf-8", headers=_VIEW_HEADERS)

    @v1.post("/runs/{run_id}/cancel", response_model=RunInfo)
    async def cancel_run(live: Annotated[LiveRun, Depends(_live_run)]) -> RunInfo:
        """Stop the run's agent (or take it off the queue) and wait until it has ended."""
        return await _answer(await service.cancel(live.record.id))

    @v1.post("/runs/{run_id}/resume", status_code=202, response_model=RunInfo)
    async def resume_run(live: Annotated[LiveRun, Depends(_live_run)]) -> RunInfo:
        """Queue an interrupted run again; a pipeline continues from its state."""
        return await _answer(await service.resume(live.record.id))

    app.include_router(v1)

    @app.get("/healthz", response_model=Health)
    async def health() -> Health:
        """Whether the service is up (no token needed)."""
        return Health(status="ok" if service.accepting else "draining")

    @app.get("/metrics", include_in_schema=False)
    async def metrics(request: Request) -> Response:
        """The service's metrics in the Prometheus text format; the same token as ``/v1``."""
        if not bearer_matches(request.headers.get("authorization"), token):
            return error_response(401, "unauthorized", UNAUTHORIZED)
        return Response(service.metrics.render(), media_type=METRICS_CONTENT_TYPE)

    @app.get("/ui", include_in_schema=False)
    async def page() -> Response:
        """The browser page: it holds no data, so it needs no token (every call it makes does)."""
        return Response(ui_page(), media_type="text/html; charset=utf-8", headers=_PAGE_HEADERS)

    @app.exception_handler(RequestProblem)
    async def problem(_: Request, exc: RequestProblem) -> JSONResponse:
        return error_response(exc.status, exc.code, exc.message, field=exc.field)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        # BodyLimit refuses a body that is not JSON first; this keeps the documented code
        # should one reach FastAPI's parser anyway.
        if any(error.get("type") == "json_invalid" for error in exc.errors()):
            return error_response(400, "bad_body", "the request body is not JSON; send a JSON "
                                  "object")  # fmt: skip
        return await request_validation_exception_handler(request, exc)

    @app.exception_handler(OSError)
    @app.exception_handler(LinkedPathError)
    async def storage_problem(_: Request, exc: Exception) -> JSONResponse:
        # Writing or reading the service's own files failed where no route expected it.
        _log.error("a request failed on the service's files: %s", exc)
        problem = storage_failed("its files", exc, service.root)
        return error_response(problem.status, problem.code, problem.message)

    @app.exception_handler(Exception)
    async def internal(_: Request, exc: Exception) -> JSONResponse:
        # A bug: the client gets the problem shape, never a traceback; the server logs it.
        return error_response(500, "internal_error", "the service failed to answer this "
                              "request; its log says why")  # fmt: skip

    @app.exception_handler(HTTPException)
    async def http_problem(_: Request, exc: HTTPException) -> JSONResponse:
        code = {400: "bad_body", 404: "not_found", 405: "method_not_allowed"}
        return error_response(exc.status_code, code.get(exc.status_code, "http_error"),
                              str(exc.detail))  # fmt: skip

    return app
