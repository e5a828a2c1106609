"""A bound on request bodies: a 413 in the service's own error shape, before a route reads it.

A declared ``Content-Length`` over the bound is refused at once; a body sent in chunks is
counted as it arrives and refused when it passes the bound.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from phasegate._server.responses import error_response


class _TooLarge(Exception):
    pass


class BodyLimit:
    """ASGI middleware refusing bodies over ``max_bytes``."""

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
        received = 0
        started = False

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise _TooLarge
            return message

        async def noted(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, noted)
        except _TooLarge:
            if not started:
                await self._refuse(scope, receive, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = f"the request body is over {self.max_bytes} bytes; send a smaller one"
        await error_response(413, "body_too_large", message)(scope, receive, send)
