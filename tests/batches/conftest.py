"""Fixtures for batch tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.batches import WriteBatch, batch_writer


@pytest.fixture
def write_batch(tmp_path: Path) -> WriteBatch:
    """Writes batch files over a copy of the bundled example in ``tmp_path``."""
    return batch_writer(tmp_path)
