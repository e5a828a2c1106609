"""The errors the service answers with: a status code, a stable code, what to do, the field."""

from __future__ import annotations


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
