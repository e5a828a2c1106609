"""Answers kept by idempotency key: the same key and request get the answer kept the first
time; the same key with another request is refused.

One file per key, named by the key's digest, holds the digest of the request and the answer.
Files are written atomically, so a crash leaves no half-written answer, and a damaged file is
treated as a key never seen (the request is carried out again and the file rewritten). Given
the folder the store lies ``inside`` (a work directory), every folder between them must be a
real folder and a kept file is never read or written through a link
(:mod:`phasegate._files.confined`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from phasegate._files.atomic import write_atomic
from phasegate._files.confined import held_lock, inside_folder
from phasegate._files.limits import read_bounded
from phasegate.errors import IdempotencyKeyError, IdempotencyKeyReusedError

MAX_KEY_LENGTH = 255


class IdempotencyStore:
    """The keys seen so far and their answers, in ``folder`` (created on first write),
    below ``inside`` when given: no link between them is followed."""

    def __init__(self, folder: Path, *, inside: Path | None = None) -> None:
        self.folder = folder
        self.inside = inside

    def find(self, key: str, request_digest: str) -> dict[str, Any] | None:
        """The answer kept for ``key`` (None for a new key).

        Raises :class:`IdempotencyKeyError` for a key that cannot be one and
        :class:`IdempotencyKeyReusedError` when ``key`` came with another request.
        """
        path = self.path_of(key)
        self._checked_folder(create=False)
        try:
            kept = json.loads(read_bounded(path, follow_links=False))
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
        data = json.dumps(record, sort_keys=True).encode("utf-8")
        write_atomic(self.path_of(key), data, inside=self.inside)

    @contextlib.contextmanager
    def holding(self, key: str) -> Iterator[None]:
        """Hold ``key`` while its request is carried out: another holder of the same key (in
        any process) waits until this one is done, then finds its kept answer. The lock is
        the operating system's, so a killed holder releases it; its file is removed when the
        holder is done, whether the request was carried out or refused."""
        lock = self.path_of(key).with_suffix(".lock")
        self._checked_folder(create=True)
        with held_lock(lock):
            yield

    def _checked_folder(self, *, create: bool) -> None:
        """The store's folder below ``inside``, made when ``create``: LinkedPathError for a
        link on the way (without ``inside``, the folder is only made)."""
        if self.inside is not None:
            between = self.folder.relative_to(self.inside).as_posix()
            inside_folder(self.inside, "" if between == "." else between, create=create)
        elif create:
            self.folder.mkdir(parents=True, exist_ok=True)

    def path_of(self, key: str) -> Path:
        """The file that keeps ``key``'s answer (an IdempotencyKeyError for a bad key)."""
        if not key or len(key) > MAX_KEY_LENGTH or not key.isascii() or not key.isprintable():
            raise IdempotencyKeyError(
                f"an idempotency key is 1 to {MAX_KEY_LENGTH} printable ASCII characters"
            )
        return self.folder / (hashlib.sha256(key.encode("ascii")).hexdigest() + ".json")
