"""Who may call the service: a bearer token, and only through names of this machine.

The token is compared in constant time, by a middleware, before a route reads the request:
a request without it is a 401 whatever its body holds (a malformed body is no reason to tell
a stranger more). Requests must name an allowed host in ``Host``
(and, from a browser, an allowed origin in ``Origin``): a web page elsewhere whose domain
is made to resolve to 127.0.0.1 (DNS rebinding) still sends its own name there, and is
refused before any route runs.
"""

from __future__ import annotations

import hmac
import os
import secrets
import stat
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from phasegate._files.limits import read_bounded
from phasegate._files.portable import CLOEXEC, NOFOLLOW
from phasegate._server.problems import error_response
from phasegate.errors import UsageError
from phasegate.modes import STATE_DIR

TOKEN_BYTES = 32
_TOKEN_FILE_BYTES = 4096
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def default_token_file(root: Path) -> Path:
    """Where the token is kept when no token file is named."""
    return root / STATE_DIR / "server-token"


def load_or_create_token(path: Path, *, create: bool) -> str:
    """The token in ``path``; with ``create``, a new random one is written first when the
    file does not exist (mode 0600, never through a symbolic link: the default token file
    lies in the service's folder, where a link is no file of the service's)."""
    try:
        if create and not path.exists():
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            token = secrets.token_urlsafe(TOKEN_BYTES)
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | CLOEXEC
            with os.fdopen(os.open(path, flags, 0o600), "w", encoding="utf-8") as file:
                file.write(token + "\n")
        token = read_bounded(path, _TOKEN_FILE_BYTES, follow_links=not create).decode().strip()
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise UsageError(f"cannot read the token file {path}: {reason}") from None
    if len(token) < 16:
        raise UsageError(
            f"the token in {path} is shorter than 16 characters; use a long random one"
        )
    return token


def readable_by_others(path: Path) -> bool:
    """Whether users other than the owner may read ``path``."""
    try:
        return bool(path.stat().st_mode & (stat.S_IRGRP | stat.S_IROTH))
    except OSError:
        return False


def token_matches(given: str, token: str) -> bool:
    """Whether ``given`` is ``token``, compared in constant time."""
    return hmac.compare_digest(given.encode("utf-8"), token.encode("utf-8"))


UNAUTHORIZED = (
    "send the service's token as 'Authorization: Bearer <token>' (it is in the token file)"
)
"""What a 401 says."""
PROTECTED = "/v1"
"""The prefix of every route that needs the token."""


def bearer_matches(authorization: str | None, token: str) -> bool:
    """Whether an ``Authorization`` header value carries ``token`` as a bearer token."""
    scheme, _, given = (authorization or "").partition(" ")
    return scheme.lower() == "bearer" and token_matches(given.strip(), token)


class TokenGuard:
    """ASGI middleware: a 401 for a ``/v1`` request without the token, before its body is
    read or checked."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        guarded = path == PROTECTED or path.startswith(PROTECTED + "/")
        if scope["type"] != "http" or not guarded:
            await self.app(scope, receive, send)
            return
        authorization = next(
            (v.decode("latin-1") for k, v in scope["headers"] if k.lower() == b"authorization"),
            None,
        )
        if bearer_matches(authorization, self.token):
            await self.app(scope, receive, send)
            return
        await error_response(401, "unauthorized", UNAUTHORIZED)(scope, receive, send)


class HostGuard:
    """ASGI middleware: a 403 for a ``Host`` or ``Origin`` outside the allowed names."""

    def __init__(self, app: ASGIApp, hosts: Iterable[str]) -> None:
        self.app = app
        self.hosts = frozenset(h.lower().strip("[]") for h in hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        problem = self._problem(headers.get("host"), headers.get("origin"))
        if problem is None:
            await self.app(scope, receive, send)
            return
        await error_response(403, "forbidden_host", problem)(scope, receive, send)

    def _problem(self, host: str | None, origin: str | None) -> str | None:
        if host is None or _hostname(f"//{host}") not in self.hosts:
            return (
                f"the Host header {host!r} is not a name of this service; call it by one of "
                f"{', '.join(sorted(self.hosts))} (or start it allowing that name)"
            )
        if origin is not None and (origin == "null" or _hostname(origin) not in self.hosts):
            return f"requests from the origin {origin!r} are not allowed"
        return None


def _hostname(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""
