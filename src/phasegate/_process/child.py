"""The child's side: read the job from stdin, and end with the parent.

The job arrives pickled, after :data:`LENGTH_BYTES` bytes of its length. The parent keeps
the pipe open while it lives; when it closes (the parent died or gave up on the child), the
child ends its whole process group, so no agent runs on unwatched.
"""

from __future__ import annotations

import os
import pickle
import signal
import threading
from typing import TypeVar

LENGTH_BYTES = 8
"""The size of the job's length prefix (big-endian)."""

_STDIN = 0

T = TypeVar("T")


def receive_job(kind: type[T]) -> T:
    """The job on stdin; exits the process when it is missing or not a ``kind``."""
    size = int.from_bytes(_read_exactly(LENGTH_BYTES), "big")
    job = pickle.loads(_read_exactly(size))
    if not isinstance(job, kind):
        raise SystemExit(f"expected a {kind.__name__} on stdin, got {type(job).__name__}")
    return job


def end_with_parent(fd: int = _STDIN) -> None:
    """From now on, end this process group as soon as the parent closes its end of ``fd``
    (a pipe; stdin by default)."""
    threading.Thread(target=_wait_for_parent, args=(fd,), daemon=True).start()


def _read_exactly(size: int) -> bytes:
    """``size`` bytes of stdin, read from the descriptor itself: a buffered reader's lock
    held by the watching thread would stop the interpreter from exiting."""
    data = bytearray()
    while len(data) < size:
        chunk = os.read(_STDIN, size - len(data))
        if not chunk:
            raise SystemExit("stdin closed before the whole job arrived")
        data += chunk
    return bytes(data)


def _wait_for_parent(fd: int) -> None:
    while os.read(fd, 4096):
        pass
    os.killpg(os.getpgrp(), signal.SIGKILL)
