"""``phasegate batch report``: the merged report of one or more batch output directories."""

from __future__ import annotations


def batch_report() -> None:
    """The merged report of batch output directories (not written yet)."""
    raise NotImplementedError
