"""Bounding a block of a test in time, so a read that blocks fails instead of hanging."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator


@contextlib.contextmanager
def within(seconds: int) -> Iterator[None]:
    """Fail the test, instead of hanging it, when the block waits longer than ``seconds``
    (SIGALRM: main thread only, which is where pytest runs a test)."""

    def expired(*_: object) -> None:
        raise TimeoutError(f"still waiting after {seconds} s: the block blocked")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
