"""Idempotency keys: a repeated ``POST /v1/runs`` with the same key returns the same run.

A key is kept in ``ROOT/.phasegate/idempotency/`` with the run it started and the digest of the
request (:class:`~phasegate._files.idempotency.IdempotencyStore`), so keys survive a restart,
and a key sent again with another request is refused instead of silently answered with a run
it did not ask for.
"""

from __future__ import annotations

from pathlib import Path

from phasegate._files.idempotency import MAX_KEY_LENGTH, IdempotencyStore
from phasegate._server.problems import RequestProblem
from phasegate.errors import IdempotencyKeyError, IdempotencyKeyReusedError
from phasegate.pipelines.state import STATE_DIR

HEADER = "Idempotency-Key"


class IdempotencyKeys:
    """The keys this service has seen, on disk under ``root``."""

    def __init__(self, root: Path) -> None:
        self.store = IdempotencyStore(root / STATE_DIR / "idempotency")

    def find(self, key: str, request_digest: str) -> str | None:
        """The run ``key`` started (None for a new key); a 422 problem when it came with
        another request, a 400 problem for a key that cannot be one."""
        try:
            kept = self.store.find(key, request_digest)
        except IdempotencyKeyReusedError:
            raise RequestProblem(
                422, "idempotency_key_reused",
                f"this {HEADER} was used with another request; send a new key for a new run",
                field=HEADER,
            ) from None  # fmt: skip
        except IdempotencyKeyError:
            raise _bad_key() from None
        run_id = kept.get("run_id") if kept is not None else None
        return run_id if isinstance(run_id, str) else None

    def remember(self, key: str, request_digest: str, run_id: str) -> None:
        """Keep ``key`` as the key of ``run_id``."""
        try:
            self.store.remember(key, request_digest, {"run_id": run_id})
        except IdempotencyKeyError:
            raise _bad_key() from None


def _bad_key() -> RequestProblem:
    return RequestProblem(
        400, "bad_idempotency_key",
        f"an {HEADER} is 1 to {MAX_KEY_LENGTH} printable ASCII characters", field=HEADER,
    )  # fmt: skip
