"""Answers kept by idempotency key: the same key and request get the answer kept the first
time; the same key with another request is refused.

One file per key, named by the key's digest, holds the digest of the request and the answer.
Files are written atomically, so a crash leaves no half-written answer, and a damaged file is
treated as a key never seen (the request is carried out again and the file rewritten).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from phasegate._files.atomic import write_atomic
from phasegate.errors import IdempotencyKeyError, IdempotencyKeyReusedError

MAX_KEY_LENGTH = 255


class IdempotencyStore:
    """The keys seen so far and their answers, in ``folder`` (created on first write)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def find(self, key: str, request_digest: str) -> dict[str, Any] | None:
        """The answer kept for ``key`` (None for a new key).

        Raises :class:`IdempotencyKeyError` for a key that cannot be one and
        :class:`IdempotencyKeyReusedError` when ``key`` came with another request.
        """
        path = self._path(key)
        try:
            kept = json.loads(path.read_bytes())
        except (OSError, ValueError):
            return None
        if isinstance(kept, dict) and "answer" not in kept and "request_digest" in kept:
            # Written before answers were nested: the answer's fields sat beside the digest.
            kept = {"request_digest": kept.pop("request_digest"), "answer": kept}
        if not isinstance(kept, dict) or not isinstance(kept.get("answer"), dict):
            return None
        if kept.get("request_digest") != request_digest:
            raise IdempotencyKeyReusedError(
                "this idempotency key was used with a different request; use a new key for a "
                "new request, or repeat the first request exactly"
            )
        answer: dict[str, Any] = kept["answer"]
        return answer

    def remember(self, key: str, request_digest: str, answer: dict[str, Any]) -> None:
        """Keep ``answer`` as the answer to ``key`` with the request of ``request_digest``."""
        record = {"request_digest": request_digest, "answer": answer}
        write_atomic(self._path(key), json.dumps(record, sort_keys=True).encode("utf-8"))

    @contextlib.contextmanager
    def holding(self, key: str) -> Iterator[None]:
        """Hold ``key`` while its request is carried out: another holder of the same key (in
        any process) waits until this one is done, then finds its kept answer. The lock is
        the operating system's, so a killed holder releases it."""
        lock = self._path(key).with_suffix(".lock")
        lock.parent.mkdir(parents=True, exist_ok=True)
        with lock.open("a") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def _path(self, key: str) -> Path:
        if not key or len(key) > MAX_KEY_LENGTH or not key.isascii() or not key.isprintable():
            raise IdempotencyKeyError(
                f"an idempotency key is 1 to {MAX_KEY_LENGTH} printable ASCII characters"
            )
        return self.folder / (hashlib.sha256(key.encode("ascii")).hexdigest() + ".json")
