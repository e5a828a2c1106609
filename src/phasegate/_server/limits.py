"""A bound on request bodies: a 413 in the service's own error shape, before a route reads it.

A declared ``Content-Length`` over the bound is refused at once; a body sent in chunks is
read as it arrives and refused as soon as it passes the bound.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from phasegate._server.responses import error_response


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
        whole: list[Message] = [{"type": "http.request", "body": bytes(body), "more_body": False}]

        async def replay() -> Message:
            return whole.pop() if whole else await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = f"the request body is over {self.max_bytes} bytes; send a smaller one"
        await error_response(413, "body_too_large", message)(scope, receive, send)
