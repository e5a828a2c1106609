"""``ServiceClient``: start runs on ``phasegate serve``, follow their events, wait for reports.

Needs the ``client`` extra (httpx). Every failure is a :class:`ServiceError`; the event
stream reconnects by itself after a dropped connection, from the last event it yielded.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Self

try:
    import httpx
except ImportError as exc:  # pragma: no cover - exercised with httpx hidden
    raise ImportError(
        "phasegate's service client needs httpx: pip install 'phasegate[client]'", name="httpx"
    ) from exc
from pydantic import ValidationError

from phasegate.client.bodies import health, json_object, run_info
from phasegate.client.errors import bad_answer, error_from_response, unreachable
from phasegate.client.events import ServiceEvent
from phasegate.client.following import Reconnects, follow
from phasegate.client.schema import ACTIVE, Health, RunInfo, RunRequest
from phasegate.errors import UsageError
from phasegate.modes import Isolation, Mode, RunStatus

_PathOrObject = str | os.PathLike[str] | Mapping[str, Any]


class ServiceClient:
    """An async client of ``phasegate serve`` at ``base_url`` (``http://127.0.0.1:8080``).

    ``token`` (or ``token_file``, the file the service printed at start) is sent as
    ``Authorization: Bearer``. ``timeout`` bounds each request; a stream of events counts as
    dropped after ``idle_timeout`` seconds without a byte (the service pings while idle) and
    reconnects at most ``max_reconnects`` times in a row, waiting what the stream's
    ``retry:`` asked for, else ``backoff`` seconds doubled each time. Use it as
    ``async with ServiceClient(...) as client:`` so its connections close.
    """

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        token_file: str | os.PathLike[str] | None = None,
        timeout: float = 30.0,
        idle_timeout: float = 90.0,
        max_reconnects: int = 5,
        backoff: float = 0.5,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if token is None and token_file is not None:
            token = _read_token(Path(token_file))
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.base_url = base_url.rstrip("/")
        self._reconnects = Reconnects(timeout, idle_timeout, max_reconnects, backoff)
        self._http = httpx.AsyncClient(
            base_url=self.base_url, headers=headers, timeout=timeout, transport=transport
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the client's connections."""
        await self._http.aclose()

    async def health(self) -> Health:
        """``GET /healthz``: whether the service is up (needs no token)."""
        response = await self._request("GET", "/healthz")
        return health(json_object(response.content, response.status_code))

    async def start(
        self,
        *,
        workdir: str | os.PathLike[str],
        task: _PathOrObject | None = None,
        pipeline: _PathOrObject | None = None,
        copy_workdir: bool = False,
        mode: Mode | None = None,
        isolation: Isolation | None = None,
        model: str | None = None,
        max_attempts: int | None = None,
        timeout: float | None = None,
        max_cost: float | None = None,
        record: bool | None = None,
        idempotency_key: str | None = None,
    ) -> RunInfo:
        """Start a task or a pipeline (a path under the service's root, or the definition as
        a mapping) in ``workdir`` (a path under the root); the run as queued.

        The same ``idempotency_key`` with the same request returns the run it started the
        first time instead of starting another. ``record``: False runs it without a recording
        (by default the service records every run).
        """
        fields: dict[str, Any] = {
            "task": _definition(task), "pipeline": _definition(pipeline),
            "workdir": os.fspath(workdir), "copy_workdir": copy_workdir, "mode": mode,
            "isolation": isolation, "model": model, "max_attempts": max_attempts,
            "timeout": timeout, "max_cost": max_cost, "record": record,
        }  # fmt: skip
        try:
            request = RunRequest(**fields)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or None
            message = f"{where}: {first['msg']}" if where else first["msg"]
            raise UsageError(f"run request: {message}", option=where) from exc
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        body = request.model_dump(mode="json", exclude_none=True)
        return _run_info_of(await self._request("POST", "/v1/runs", json=body, headers=headers))

    async def get(self, run_id: str) -> RunInfo:
        """The run now, with its report once it ended with one."""
        return _run_info_of(await self._request("GET", f"/v1/runs/{run_id}"))

    async def page(self, run_id: str) -> str:
        """The run's page (``GET /v1/runs/{id}/view``): one HTML document, to save and open.
        A run that kept no recording is a :class:`ServiceError` with ``code`` ``no_recording``."""
        return (await self._request("GET", f"/v1/runs/{run_id}/view")).text

    async def runs(
        self, status: RunStatus | None = None, limit: int | None = None
    ) -> AsyncIterator[RunInfo]:
        """Every run, newest first (only those with ``status`` when given), fetched ``limit``
        a page, page after page."""
        cursor: str | None = None
        while True:
            params = {"status": status, "limit": limit, "cursor": cursor}
            query = {key: value for key, value in params.items() if value is not None}
            page = await self._request("GET", "/v1/runs", params=query)
            data = json_object(page.content, page.status_code)
            runs = data.get("runs")
            if not isinstance(runs, list):
                raise bad_answer("a run list without a list of runs")
            for run in runs:
                yield run_info(run)
            following = data.get("next_cursor")
            if not following:
                return
            if following == cursor:
                raise bad_answer("the same page cursor twice")
            cursor = str(following)

    async def cancel(self, run_id: str) -> RunInfo:
        """Ask the service to stop the run; the run (``cancelled`` once it has ended)."""
        return _run_info_of(await self._request("POST", f"/v1/runs/{run_id}/cancel"))

    async def resume(self, run_id: str) -> RunInfo:
        """Queue a resumable run again: an interrupted pipeline continues from its state, a
        run interrupted before it started starts."""
        return _run_info_of(await self._request("POST", f"/v1/runs/{run_id}/resume"))

    def events(
        self, run_id: str, *, last_event_id: int | None = None
    ) -> AsyncIterator[ServiceEvent]:
        """The run's events, from after ``last_event_id`` (from the first without it), live,
        up to and with the ``done`` event.

        A dropped connection reconnects with ``Last-Event-ID``; no event is yielded twice.
        """
        return follow(self._http, run_id, last_event_id, self._reconnects)

    async def wait(self, run_id: str) -> RunInfo:
        """Follow the run's events to its end; the run then, with its report."""
        last: int | None = None
        while True:
            async for event in self.events(run_id, last_event_id=last):
                last = event.id
            info = await self.get(run_id)
            if info.status not in ACTIVE:
                return info
            # Resumed after the done that was read: follow the run's next part.

    async def _request(
        self,
        method: str,
        path: str,
        *,
        json: dict[str, Any] | None = None,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        try:
            response = await self._http.request(
                method, path, json=json, params=params, headers=headers
            )
        except httpx.TransportError as exc:
            raise unreachable(self.base_url, str(exc) or type(exc).__name__) from exc
        if response.status_code >= 400:
            raise error_from_response(response.status_code, response.content)
        return response


def _read_token(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise UsageError(
            f"{path}: cannot read the service's token ({exc.strerror}); give the path the "
            "service printed when it started",
            option="token_file",
        ) from exc


def _definition(value: _PathOrObject | None) -> str | dict[str, Any] | None:
    if value is None or isinstance(value, Mapping):
        return dict(value) if value is not None else None
    return os.fspath(value)


def _run_info_of(response: httpx.Response) -> RunInfo:
    return run_info(json_object(response.content, response.status_code))
