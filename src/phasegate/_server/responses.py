"""The service's own error responses, one shape for all: ``{"error": {code, message, field}}``."""

from __future__ import annotations

from starlette.responses import JSONResponse

from phasegate.client.schema import ErrorBody, ErrorDetail


def error_response(
    status: int,
    code: str,
    message: str,
    *,
    field: str | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    """An ``ErrorBody`` response with ``headers``; a 401 says which scheme to use."""
    body = ErrorBody(error=ErrorDetail(code=code, message=message, field=field))
    sent = {**(headers or {}), **({"WWW-Authenticate": "Bearer"} if status == 401 else {})}
    return JSONResponse(body.model_dump(mode="json"), status_code=status, headers=sent or None)
