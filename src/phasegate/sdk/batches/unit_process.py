"""The process one local unit runs in: ``python -m phasegate.sdk.batches.unit_process OUT``.

It reads a pickled :class:`~.outcome.UnitJob` from stdin (8 bytes of length, then the job),
runs it, and writes the pickled :class:`~.outcome.UnitOutcome` to the file ``OUT``. It runs
in a session of its own, so a Ctrl-C meant for the batch does not reach the unit's agent;
and it ends itself, with everything it started, when the batch process goes away (its stdin
closes), so a killed batch leaves no agent running on.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
import threading
from pathlib import Path

from phasegate._files.atomic import write_atomic
from phasegate.sdk.batches.outcome import UnitJob
from phasegate.sdk.batches.unit_run import run_unit_blocking

_STDIN = 0


def main(outcome_file: Path) -> None:
    """Run the job on stdin and write its outcome to ``outcome_file``."""
    size = int.from_bytes(_read_exactly(8), "big")
    job = pickle.loads(_read_exactly(size))
    if not isinstance(job, UnitJob):
        raise SystemExit(f"expected a UnitJob on stdin, got {type(job).__name__}")
    threading.Thread(target=_end_with_parent, daemon=True).start()
    outcome = run_unit_blocking(job)
    write_atomic(outcome_file, pickle.dumps(outcome))


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


def _end_with_parent() -> None:
    """Block until the batch process closes our stdin (it died, or cancels us), then end this
    process group: the unit and the agent CLI it started."""
    while os.read(_STDIN, 4096):
        pass
    os.killpg(os.getpgrp(), signal.SIGKILL)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
