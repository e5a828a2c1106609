"""The service's tests share a root with the example task, a pipeline and model scripts."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.service_root import make_root


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A fresh service root (see :func:`~tests.helpers.service_root.make_root`)."""
    return make_root(tmp_path / "root")
