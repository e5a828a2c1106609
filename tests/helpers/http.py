"""A real local HTTP server that counts the requests it gets (to prove none were made)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class CountingServer:
    """Where the server listens, and the paths it was asked for."""

    url: str
    requests: list[str] = field(default_factory=list)


@contextmanager
def counting_server(body: bytes = b'{"type": "object"}') -> Iterator[CountingServer]:
    """Serve ``body`` to every GET on 127.0.0.1 (a free port), recording each path."""
    server_info = CountingServer(url="")

    class _Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            server_info.requests.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server_info.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server_info
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
