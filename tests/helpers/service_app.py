"""The service's app in this process, driven through ASGI: no port, no fork server.

For tests of what happens inside one request (which thread reads a file, what a body gets)
and for fuzzing, where a real process per example would cost seconds. With the default
``max_concurrent=0`` no run ever leaves the queue, so nothing is forked.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from fastapi.testclient import TestClient

from phasegate._server.app import create_app
from phasegate._server.security import LOCAL_HOSTS
from phasegate._server.service import RunService
from phasegate._server.settings import ServiceSettings

TOKEN = "in-process-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
BASE_URL = "http://127.0.0.1"


@dataclass
class InProcess:
    """The service and an HTTP client (with the token) talking to its app."""

    service: RunService
    client: httpx.AsyncClient


def in_process_service(root: Path, **settings: Any) -> RunService:
    """A recovered service for ``root``; ``settings`` as ``ServiceSettings`` takes them
    (``max_concurrent`` 0 unless given)."""
    service = RunService(
        ServiceSettings(root=root, **{"max_concurrent": 0, "secrets": (TOKEN,), **settings})
    )
    service.recover()
    return service


@contextlib.asynccontextmanager
async def in_process(root: Path, **settings: Any) -> AsyncIterator[InProcess]:
    """The app of a service for ``root`` and an async client for it, in this event loop."""
    service = in_process_service(root, **settings)
    app = create_app(service, TOKEN, LOCAL_HOSTS)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL, headers=AUTH) as client:
        yield InProcess(service, client)


@contextlib.contextmanager
def sync_client(root: Path, **settings: Any) -> Iterator[TestClient]:
    """A synchronous client of a service for ``root`` (server errors come back as 500s, not
    raised), for hypothesis tests, which cannot be async."""
    app = create_app(in_process_service(root, **settings), TOKEN, LOCAL_HOSTS)
    with TestClient(app, base_url=BASE_URL, headers=AUTH, raise_server_exceptions=False) as client:
        yield client
