"""Fingerprints of JSON data: one canonical form, so the same data always gives one digest."""

from __future__ import annotations

import hashlib
import json


def json_digest(data: object) -> str:
    """The SHA-256 (hex) of ``data`` as canonical JSON: keys sorted, no spaces, ASCII.

    Equal data give equal digests whatever the key order; any other difference gives
    another digest.
    """
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()
