"""``phasegate batch run``: every unit of a batch file, resumable, sharded, bounded."""

from __future__ import annotations


def batch_run() -> None:
    """Run every unit of a batch file (not written yet)."""
    raise NotImplementedError
