"""A small threaded HTTP/1.1 server on 127.0.0.1 that can hold requests and stop promptly."""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Response:
    """A complete HTTP response."""

    status: int
    body: bytes
    content_type: str = "application/json"
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0
    """Seconds to hold the response before sending it (this request's thread only)."""


Answer = Callable[[str, str, "dict[str, Any] | None"], "Response | None"]
"""Turns (method, path, JSON body or None) into a response; None holds the request unanswered
until the server closes."""


class BackgroundServer:
    """Serves ``answer`` from a background thread, so it works from sync and async code alike."""

    def __init__(self, answer: Answer) -> None:
        self._answer = answer
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._connections: set[socket.socket] = set()
        self._httpd = _HTTPServer(self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"phasegate-http-{self.port}",
            daemon=True,
        )
        self._thread.start()

    @property
    def port(self) -> int:
        """The port the OS picked."""
        return int(self._httpd.server_address[1])

    def close(self) -> None:
        """Stop accepting, release held requests and drop open (keep-alive) connections."""
        with self._lock:
            self._closed.set()
            connections = list(self._connections)
        self._httpd.shutdown()
        for connection in connections:
            _drop(connection)
        self._httpd.server_close()  # joins the handler threads, all on their way out now
        self._thread.join()

    def _opened(self, connection: socket.socket) -> None:
        with self._lock:
            self._connections.add(connection)
            closed = self._closed.is_set()
        if closed:  # accepted while closing: close() may have missed it
            _drop(connection)

    def _finished(self, connection: socket.socket) -> None:
        with self._lock:
            self._connections.discard(connection)


def _drop(connection: socket.socket) -> None:
    with contextlib.suppress(OSError):  # the client may have closed it already
        connection.shutdown(socket.SHUT_RDWR)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, owner: BackgroundServer) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gives up (its timeout, a retry) resets the connection: no server error.
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the CLI's HTTP client uses it
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        self.server.owner._opened(self.connection)

    def finish(self) -> None:
        self.server.owner._finished(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet: the model server records requests itself."""

    def do_GET(self) -> None:
        self._serve(None)

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = None
        self._serve(parsed if isinstance(parsed, dict) else None)

    def _serve(self, body: dict[str, Any] | None) -> None:
        owner = self.server.owner
        response = owner._answer(self.command, self.path, body)
        # Waiting on the close event, not sleeping: close() releases a delayed answer at once.
        if response is None or (response.delay > 0 and owner._closed.wait(response.delay)):
            owner._closed.wait()
            self.close_connection = True
            return
        # send_response_only: no Date or Server header, so the bytes do not depend on the clock.
        self.send_response_only(response.status)
        self.send_header("content-type", response.content_type)
        self.send_header("content-length", str(len(response.body)))
        for name, value in response.headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(response.body)
