"""Limits on requests: bodies bounded and read as strict JSON, event streams counted.

**Bodies**, before a route reads them.
A declared ``Content-Length`` over the bound is refused at once (``413``); a body sent in
chunks is read as it arrives and refused as soon as it passes the bound. A body that is
sent at all must be strict JSON (``400 bad_body``): Python's parser would take ``NaN``,
``Infinity`` and ``1e999`` (a float too large, read as infinity), which are not JSON and
which no field of the service means; a lone surrogate (``"\\ud800"``) is no text a path or
a file can hold. Schema errors are left to the routes (``422``).

**Event streams.** Each open stream holds a connection (a descriptor) for as long as its run
lasts, so their number is bounded: per client address (``429``) and in all (``503``), both
``too_many_streams`` with a ``Retry-After``. A stream's slot is free again as soon as it ends
or its client hangs up. Behind a proxy every client has the proxy's address: raise the
per-client bound there.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from phasegate._server.problems import error_response

_WITH_BODY = frozenset({"POST", "PUT", "PATCH"})


class BodyLimit:
    """ASGI middleware refusing bodies over ``max_bytes``, and bodies that are not JSON."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(scope, receive, send)
            return
        # The body is read here, whole, so a route never sees a part of one that is too big.
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away before it finished sending
            body += message.get("body", b"")
            if len(body) > self.max_bytes:
                await self._refuse(scope, receive, send)
                return
            if not message.get("more_body", False):
                break
        if body and scope["method"] in _WITH_BODY and (problem := json_problem(body)) is not None:
            await error_response(400, "bad_body", problem)(scope, receive, send)
            return
        whole: list[Message] = [{"type": "http.request", "body": bytes(body), "more_body": False}]

        async def replay() -> Message:
            return whole.pop() if whole else await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = f"the request body is over {self.max_bytes} bytes; send a smaller one"
        await error_response(413, "body_too_large", message)(scope, receive, send)


def json_problem(body: bytes | bytearray) -> str | None:
    """Why ``body`` is not strict JSON, in words (None when it is)."""
    try:
        value = json.loads(body, parse_constant=_no_constant, parse_float=_finite)
        # Every string must be text UTF-8 can hold: a lone surrogate cannot be a path.
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except RecursionError:
        return "the request body nests too deep to be read; send a flatter JSON body"
    except UnicodeError:
        return "the request body is not UTF-8 text, or holds a lone surrogate; send UTF-8 JSON"
    except ValueError as exc:
        return f"the request body is not JSON ({exc}); send a JSON object"
    return None


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:40]} is too large to be a number here")
    return value


STREAM_PATH = re.compile(r"^/v1/runs/[^/]+/events$")
"""The event stream's route."""
RETRY_STREAMS_AFTER = 10
"""Seconds a refused stream is told to wait (``Retry-After``)."""


class StreamLimit:
    """ASGI middleware bounding the event streams open at once: ``per_client`` from one
    address, ``total`` in all."""

    def __init__(
        self, app: ASGIApp, per_client: int, total: int, open_now: Counter[str] | None = None
    ) -> None:
        self.app = app
        self.per_client = per_client
        self.total = total
        self.open: Counter[str] = open_now if open_now is not None else Counter()
        """Streams open now, by client address (the service's, for its metrics)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        stream = scope["type"] == "http" and scope["method"] == "GET"
        if not (stream and STREAM_PATH.match(scope.get("path", ""))):
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        peer = str(client[0]) if client else "unknown"
        if self.open[peer] >= self.per_client:
            status, problem = (
                429,
                (
                    f"this client has {self.per_client} event streams open, the most one client "
                    "may; close one, or follow fewer runs at once"
                ),
            )
        elif self.open.total() >= self.total:
            status, problem = (
                503,
                (
                    f"the service has {self.total} event streams open, the most it serves at "
                    "once; retry later"
                ),
            )
        else:
            self.open[peer] += 1
            try:
                await self.app(scope, receive, send)
            finally:
                self.open[peer] -= 1
                if not self.open[peer]:
                    del self.open[peer]
            return
        headers = {"Retry-After": str(RETRY_STREAMS_AFTER)}
        await error_response(status, "too_many_streams", problem, headers=headers)(
            scope, receive, send
        )
