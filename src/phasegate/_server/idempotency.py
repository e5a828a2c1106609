"""Idempotency keys: a repeated ``POST /v1/runs`` with the same key returns the same run.

A key is kept as a file named by its digest in ``ROOT/.phasegate/idempotency/``, holding the
run it started and the digest of the request, so keys survive a restart and a key sent again
with another request is refused instead of silently answered with a run it did not ask for.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from phasegate._files.atomic import write_atomic
from phasegate._server.problems import RequestProblem
from phasegate.sdk.pipelines.state import STATE_DIR

HEADER = "Idempotency-Key"
MAX_KEY_LENGTH = 255


class IdempotencyKeys:
    """The keys this service has seen, on disk under ``root``."""

    def __init__(self, root: Path) -> None:
        self.folder = root / STATE_DIR / "idempotency"

    def find(self, key: str, request_digest: str) -> str | None:
        """The run ``key`` started (None for a new key); a 422 problem when it came with
        another request."""
        path = self._path(key)
        try:
            kept = json.loads(path.read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return None  # a damaged key file: the key starts a new run and is written again
        if kept.get("request_digest") != request_digest:
            raise RequestProblem(
                422, "idempotency_key_reused",
                f"this {HEADER} was used with another request; send a new key for a new run",
                field=HEADER,
            )  # fmt: skip
        run_id = kept.get("run_id")
        return run_id if isinstance(run_id, str) else None

    def remember(self, key: str, request_digest: str, run_id: str) -> None:
        """Keep ``key`` as the key of ``run_id``."""
        self.folder.mkdir(parents=True, exist_ok=True)
        record = {"run_id": run_id, "request_digest": request_digest}
        write_atomic(self._path(key), json.dumps(record).encode("utf-8"))

    def _path(self, key: str) -> Path:
        if not key or len(key) > MAX_KEY_LENGTH or not key.isascii() or not key.isprintable():
            raise RequestProblem(
                400, "bad_idempotency_key",
                f"an {HEADER} is 1 to {MAX_KEY_LENGTH} printable ASCII characters",
                field=HEADER,
            )  # fmt: skip
        return self.folder / (hashlib.sha256(key.encode("ascii")).hexdigest() + ".json")
