"""Shared pieces of the fuzz tests: hostile text and a memory bound."""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager

from hypothesis import strategies as st

MEMORY_BOUND = 64 * 1024 * 1024
"""No single fuzz example may make the reader or loader allocate more than this at its peak."""

hostile_text = st.one_of(
    st.text(max_size=400),
    st.binary(max_size=400).map(lambda raw: raw.decode("utf-8", errors="replace")),
    st.sampled_from(["{", "[", "{}", "[]", "null", "1e999", "-0", "\ufeff", "\x00", '"\\ud800"']),
)
"""Text a careless or hostile user may hand a reader: anything, broken JSON, odd code points."""


@contextmanager
def bounded_memory(limit: int = MEMORY_BOUND) -> Iterator[None]:
    """Fail when the block's peak traced allocation passes ``limit`` bytes."""
    tracemalloc.start()
    try:
        yield
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak <= limit, f"peak allocation {peak} bytes passes the bound of {limit}"
