"""``ServiceError``: what went wrong between the client and ``phasegate serve``, and what to do.

Every failure the client meets becomes one: an error response (the service's ``ErrorBody``,
or a request-validation answer), a server that cannot be reached, a stream that keeps
dropping, an answer that is not what the service promises. Pure: no HTTP library here.
"""

from __future__ import annotations

import json
from typing import Any

from phasegate.errors import PhasegateError

_ADVICE = {
    401: "the service refused the token: pass the token from the service's token file "
    "(the path it printed when it started; ROOT/.phasegate/server-token by default)",
    403: "the service refused this Host or Origin (it answers only the addresses it allows, "
    "against DNS rebinding): connect through the address it printed when it started",
    404: "no such run or endpoint: check the run id (list runs with runs()) and the base URL",
    409: "the run's state does not allow this (cancel a run only while it is queued or "
    "running; resume one only when its resumable is true)",
    413: "the request body is over the service's size limit: give the task or pipeline as "
    "a file path under the service's root instead of inline",
    422: "the service rejected the request: fix the field it names",
    429: "this client has as many event streams open as the service allows one address: "
    "close one, or follow fewer runs at once (the service's per-client limit can be raised)",
}
"""What a status means for the caller and what to do about it."""


class ServiceError(PhasegateError):
    """A request to ``phasegate serve`` failed.

    ``status_code`` is the HTTP status (None when no answer came: the service is unreachable,
    or its stream kept dropping); ``code`` is the service's error code (``not_found``,
    ``idempotency_key_reused``, ``unreachable``, ...), ``message`` the service's own words,
    ``field`` the request field at fault when there is one. ``str(error)`` adds what to do.
    A rejected request (4xx) is a usage error (exit code 2); the rest exit with 3.
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None,
        code: str,
        field: str | None = None,
        advice: str | None = None,
    ) -> None:
        self.status_code = status_code
        self.code = code
        self.message = message
        self.field = field
        self.exit_code = 2 if status_code is not None and 400 <= status_code < 500 else 3
        where = f" ({status_code} {code})" if status_code is not None else f" ({code})"
        text = f"{message}{where}"
        if field:
            text = f"{field}: {text}"
        if advice is None and status_code is not None:
            advice = _ADVICE.get(status_code)
            if advice is None and status_code >= 500:
                advice = "the service failed: its log says why; retry once it is healthy"
        super().__init__(f"{text}; {advice}" if advice else text)


def error_from_response(status_code: int, body: bytes) -> ServiceError:
    """The error an error response stands for: from an ``ErrorBody``, a request-validation
    answer (``{"detail": [{"loc", "msg"}]}``), or, for anything else, the status alone."""
    try:
        data: Any = json.loads(body)
    except ValueError:
        data = None
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        field = error.get("field")
        return ServiceError(
            error["message"],
            status_code=status_code,
            code=str(error.get("code") or "error"),
            field=field if isinstance(field, str) else None,
        )
    detail = data.get("detail") if isinstance(data, dict) else None
    if isinstance(detail, list) and detail and isinstance(detail[0], dict):
        first = detail[0]
        loc = [str(part) for part in first.get("loc", []) if part != "body"]
        return ServiceError(
            str(first.get("msg", "invalid request")),
            status_code=status_code,
            code="invalid_request",
            field=".".join(loc) or None,
        )
    if isinstance(detail, str):
        return ServiceError(detail, status_code=status_code, code="error")
    return ServiceError("the request failed", status_code=status_code, code="error")


def unreachable(base_url: str, reason: object) -> ServiceError:
    """The service at ``base_url`` did not answer at all."""
    return ServiceError(
        f"cannot reach the service at {base_url}: {reason}",
        status_code=None,
        code="unreachable",
        advice="is it running? check the address and port it printed when it started",
    )


def bad_answer(what: str) -> ServiceError:
    """The service answered something the wire schema does not allow."""
    return ServiceError(
        f"the service sent {what}",
        status_code=None,
        code="bad_response",
        advice="the client and the service may be different versions of phasegate",
    )
