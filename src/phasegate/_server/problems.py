"""The errors the service answers with, and their one shape: a status code, a stable code,
what to do, the field, as ``{"error": {code, message, field}}``."""

from __future__ import annotations

from pathlib import Path

from starlette.responses import JSONResponse

from phasegate.client.schema import ErrorBody, ErrorDetail


class RequestProblem(Exception):
    """A request the service refuses; it becomes an ``ErrorBody`` response."""

    def __init__(self, status: int, code: str, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.field = field


def not_found(run_id: str) -> RequestProblem:
    """No run has this id."""
    return RequestProblem(
        404, "run_not_found", f"no run has the id {run_id!r}; list runs to see theirs"
    )


def storage_failed(what: str, exc: BaseException, root: Path) -> RequestProblem:
    """The service could not write ``what`` under ``ROOT/.phasegate`` (a full disk, a
    read-only root, a link in its folder): a 503 saying why."""
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    reason = root_relative(reason, root)
    return RequestProblem(
        503, "storage_failed",
        f"the service could not write {what} in its folder .phasegate: {reason}; free space "
        "or fix the folder's permissions, then retry",
    )  # fmt: skip


def root_relative(text: str, root: Path) -> str:
    """Messages name paths relative to the root: a client has no business with the host's."""
    return text.replace(str(root.resolve()) + "/", "").replace(str(root.resolve()), ".")


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
