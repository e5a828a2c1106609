"""The proxy a confined check's commands reach hosts through (phasegate.workspace.host_proxy):
listed hosts only, as Claude Code's sandbox lists them. Connections are handed to it as the
bridge in the sandbox hands them: a socket's descriptor over its socket pair."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable, Iterator

import pytest

from phasegate.workspace.host_proxy import HostProxy, host_allowed
from tests.helpers.sandboxed import local_server

Connect = Callable[[HostProxy], socket.socket]
"""Opens a connection to a proxy, handed over as the bridge in the sandbox hands it."""


@pytest.mark.parametrize(
    ("host", "hosts", "allowed"),
    [
        ("pypi.org", ("pypi.org",), True),
        ("PyPI.org.", ("pypi.org",), True),
        ("files.pypi.org", ("pypi.org",), False),
        ("api.github.com", ("*.github.com",), True),
        ("a.b.github.com", ("*.github.com",), True),
        ("github.com", ("*.github.com",), False),
        ("evilgithub.com", ("*.github.com",), False),
        ("127.0.0.1", ("127.0.0.1",), True),
        ("localhost", ("127.0.0.1",), False),
        ("", ("pypi.org",), False),
        ("pypi.org", (), False),
    ],
)
def test_a_host_is_allowed_only_by_its_own_name_or_a_wildcard_above_it(
    host: str, hosts: tuple[str, ...], allowed: bool
) -> None:
    """The name itself (case and a final dot aside), or a name under ``*.``'s domain."""
    assert host_allowed(host, hosts) is allowed


@pytest.fixture
def connect() -> Iterator[Connect]:
    """A function opening a connection to a proxy, handed over as the bridge hands it."""
    opened: list[socket.socket] = []

    def open_to(proxy: HostProxy) -> socket.socket:
        ours, handed = socket.socketpair()
        socket.send_fds(proxy.theirs, [b"c"], [handed.fileno()])
        handed.close()
        ours.settimeout(30)
        opened.append(ours)
        return ours

    yield open_to
    for connection in opened:
        connection.close()


def read_all(connection: socket.socket) -> bytes:
    """Everything ``connection`` sends until it closes."""
    data = b""
    while chunk := connection.recv(65536):
        data += chunk
    return data


def test_a_tunnel_to_a_listed_host_carries_bytes_both_ways(connect: Connect) -> None:
    """``CONNECT host:port`` to a listed host: ``200``, then the bytes of the conversation
    go through untouched."""
    with local_server() as server, HostProxy(("127.0.0.1",)) as proxy:
        client = connect(proxy)
        client.sendall(f"CONNECT 127.0.0.1:{server.port} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        assert client.recv(100) == b"HTTP/1.1 200 Connection established\r\n\r\n"
        client.sendall(b"GET /tunnelled HTTP/1.0\r\n\r\n")
        assert read_all(client).endswith(b"hello-from-local")
    assert server.hits == ["/tunnelled"]


def test_a_plain_request_reaches_a_listed_host_in_origin_form_without_proxy_headers(
    connect: Connect,
) -> None:
    """``GET http://host:port/path``: the host gets ``GET /path`` with the other headers,
    never the proxy's own (a ``Proxy-Authorization`` is not passed on)."""
    received: list[bytes] = []
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def answer() -> None:
        connection, _ = listener.accept()
        with connection:
            received.append(connection.recv(65536))
            connection.sendall(b"HTTP/1.0 200 OK\r\n\r\nfine")

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    with listener, HostProxy(("127.0.0.1",)) as proxy:
        client = connect(proxy)
        client.sendall(
            f"GET http://127.0.0.1:{port}/a/b?c=d HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "Proxy-Authorization: Basic secret\r\nAccept: */*\r\n\r\n".encode()
        )
        assert read_all(client).endswith(b"fine")
        thread.join(10)
    assert received == [b"GET /a/b?c=d HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: */*\r\n\r\n"]


@pytest.mark.parametrize(
    "request_line",
    [
        "CONNECT localhost:{port} HTTP/1.1",
        "GET http://localhost:{port}/x HTTP/1.1",
        "GET http://127.0.0.1@localhost:{port}/x HTTP/1.1",
    ],
)
def test_a_host_not_listed_is_refused_and_never_reached(
    connect: Connect, request_line: str
) -> None:
    """``403`` with Claude Code's words, the host kept in ``refused``; the server (the same
    one, by a name not listed) sees nothing."""
    with local_server() as server, HostProxy(("127.0.0.1",)) as proxy:
        client = connect(proxy)
        client.sendall(request_line.format(port=server.port).encode() + b"\r\n\r\n")
        answer = read_all(client)
    assert answer.startswith(b"HTTP/1.1 403 Forbidden\r\n")
    assert b"Connection blocked by network allowlist: localhost" in answer
    assert proxy.refused == [f"localhost:{server.port}"]
    assert server.hits == []


def test_what_is_handed_over_and_is_no_connection_is_dropped_and_the_proxy_goes_on(
    connect: Connect,
) -> None:
    """A descriptor of something else (a pipe) is closed, not served; the next connection
    is served as usual."""
    with local_server() as server, HostProxy(("127.0.0.1",)) as proxy:
        read, write = os.pipe()
        socket.send_fds(proxy.theirs, [b"c"], [read])
        os.close(read)
        client = connect(proxy)
        client.sendall(f"GET http://127.0.0.1:{server.port}/next HTTP/1.0\r\n\r\n".encode())
        assert read_all(client).endswith(b"hello-from-local")
        os.close(write)
    assert server.hits == ["/next"]
