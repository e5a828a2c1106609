"""The hosts a confined check's commands may reach: an HTTP proxy that lets through only the
ones a run's ``network:`` lists (docs/sandbox.md).

Inside the sandbox, :mod:`phasegate.workspace.proxy_bridge` accepts each connection the
command makes to its proxy address and hands it over a socket pair to :class:`HostProxy`,
which runs in the gate's process, outside the sandbox. It reads one request from it, as an
HTTP proxy does: ``CONNECT host:port`` (HTTPS, or any TCP through a tunnel) or a plain HTTP
request in absolute form (``GET http://host/path``). A host listed (:func:`host_allowed`:
the name itself, case aside, or ``*.example.com`` for any name under ``example.com``, as
Claude Code's sandbox reads its ``allowedDomains``) gets a connection, opened from here,
and the bytes are carried both ways until either side closes; any other host is refused
with ``403`` ("Connection blocked by network allowlist"), as Claude Code's proxy refuses it.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import socket
import threading
from collections.abc import Sequence
from types import TracebackType
from urllib.parse import urlsplit

HEAD_BYTES = 64 * 1024
"""The most a request's line and headers may take."""
HEAD_SECONDS = 30.0
"""How long a client may take to send them."""
CONNECT_SECONDS = 30.0
"""How long opening the connection to a listed host may take."""
HALF_OPEN_SECONDS = 60.0
"""How long a connection one side has closed waits for the other side's last words (a
command that ended closes its side: a host keeping its own open does not keep the proxy)."""
_CHUNK = 64 * 1024


def host_allowed(host: str, hosts: Sequence[str]) -> bool:
    """Whether ``host`` is one of ``hosts``: the same name (case and a final dot aside), or
    a name under ``example.com`` for ``*.example.com`` (not ``example.com`` itself)."""
    name = host.strip().rstrip(".").lower()
    if not name:
        return False
    for listed in hosts:
        pattern = listed.lower()
        if pattern.startswith("*."):
            if name.endswith(pattern[1:]) and len(name) > len(pattern) - 1:
                return True
        elif name == pattern:
            return True
    return False


class HostProxy:
    """A proxy to ``hosts`` for the connections handed over :attr:`theirs` (the end of the
    socket pair the sandbox gets), from the block's start to its end."""

    def __init__(self, hosts: Sequence[str]) -> None:
        self.hosts = tuple(hosts)
        self._ours, self.theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self._receiving = threading.Thread(target=self._receive, name="check-proxy", daemon=True)
        self.refused: list[str] = []
        """The hosts refused so far (``host:port``), in order."""
        self._lock = threading.Lock()

    def __enter__(self) -> HostProxy:
        self._receiving.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        # shutdown wakes the thread blocked receiving (closing the socket would not).
        with contextlib.suppress(OSError):
            self._ours.shutdown(socket.SHUT_RDWR)
        self._receiving.join(CONNECT_SECONDS)
        self._ours.close()
        self.theirs.close()

    def _receive(self) -> None:
        while True:
            try:
                _, fds, _, _ = socket.recv_fds(self._ours, 1, 16)
            except OSError:
                return
            if not fds:
                return  # the other end is closed
            for fd in fds:
                threading.Thread(target=self._serve, args=(fd,), daemon=True).start()

    def _serve(self, fd: int) -> None:
        try:
            client = socket.socket(fileno=fd)
        except OSError:  # not a socket: whatever was sent, it is no connection
            os.close(fd)
            return
        with client, contextlib.suppress(OSError):
            self._proxy(client)

    def _proxy(self, client: socket.socket) -> None:
        client.settimeout(HEAD_SECONDS)
        head, rest = _read_head(client)
        if head is None:
            return _answer(client, 400, "Bad Request", "no request")
        line, _, headers = head.partition(b"\r\n")
        parts = line.split()
        if len(parts) != 3:
            return _answer(client, 400, "Bad Request", "not an HTTP request")
        method, target, version = parts
        if method.upper() == b"CONNECT":
            where = _host_port(target.decode("latin-1"), default=None)
            first = b""
        else:
            url = urlsplit(target.decode("latin-1"))
            if url.scheme.lower() != "http" or not url.hostname:
                return _answer(client, 400, "Bad Request", "only http:// URLs or CONNECT")
            try:
                where = (url.hostname, url.port or 80)
            except ValueError:
                where = None
            path = (url.path or "/") + (f"?{url.query}" if url.query else "")
            kept = [
                header
                for header in headers.split(b"\r\n")
                if header and not header.lower().startswith(b"proxy-")
            ]
            first = b"\r\n".join(
                [b" ".join([method, path.encode("latin-1"), version]), *kept, b"", b""]
            )
        if where is None:
            return _answer(client, 400, "Bad Request", "no host and port")
        host, port = where
        if not host_allowed(host, self.hosts):
            with self._lock:
                self.refused.append(f"{host}:{port}")
            return _answer(
                client,
                403,
                "Forbidden",
                f"Connection blocked by network allowlist: {host} is not among the hosts "
                "this run lists (network:)",
            )
        try:
            upstream = socket.create_connection((host, port), timeout=CONNECT_SECONDS)
        except OSError as exc:
            return _answer(client, 502, "Bad Gateway", f"cannot reach {host}:{port}: {exc}")
        with upstream:
            if method.upper() == b"CONNECT":
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            client.settimeout(None)
            upstream.settimeout(None)
            upstream.sendall(first + rest)
            pump(client, upstream)
        return None


def _read_head(client: socket.socket) -> tuple[bytes | None, bytes]:
    """A request's line and headers (without the blank line), and what came after them;
    None when the client closed, took too long or sent too much first."""
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) > HEAD_BYTES:
            return None, b""
        try:
            chunk = client.recv(_CHUNK)
        except OSError:
            return None, b""
        if not chunk:
            return None, b""
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def _host_port(target: str, *, default: int | None) -> tuple[str, int] | None:
    """``host:port`` (``[v6]:port`` too) split, or None when it is not one."""
    host, colon, port = target.rpartition(":")
    if not colon:
        host, port = target, ""
    if not port and default is None:
        return None
    try:
        number = int(port) if port else default
    except ValueError:
        return None
    if number is None or not 0 < number < 65536:
        return None
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    return (host, number) if host else None


def _answer(client: socket.socket, status: int, reason: str, text: str) -> None:
    body = f"{text}\n".encode()
    client.sendall(
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body
    )


def pump(one: socket.socket, other: socket.socket) -> None:
    """Carry bytes both ways between ``one`` and ``other`` until both ends have closed
    (one side closing its writing is passed on; the other then has
    :data:`HALF_OPEN_SECONDS` of silence at most), or either fails."""
    with selectors.DefaultSelector() as selector:
        selector.register(one, selectors.EVENT_READ, other)
        selector.register(other, selectors.EVENT_READ, one)
        open_ends = 2
        while open_ends:
            ready = selector.select(None if open_ends == 2 else HALF_OPEN_SECONDS)
            if not ready:
                return
            for key, _ in ready:
                source, target = key.fileobj, key.data
                assert isinstance(source, socket.socket)
                try:
                    data = source.recv(_CHUNK)
                except OSError:
                    return
                if data:
                    try:
                        target.sendall(data)
                    except OSError:
                        return
                    continue
                selector.unregister(source)
                open_ends -= 1
                with contextlib.suppress(OSError):
                    target.shutdown(socket.SHUT_WR)
