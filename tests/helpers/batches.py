"""Batch files for tests: a copy of the bundled example and a batch file over it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests.helpers.scenarios import EXAMPLE

WriteBatch = Callable[..., Path]
"""``write(items=None, name="batch.yaml", **top) -> Path``: see :func:`batch_writer`."""


def batch_writer(root: Path) -> WriteBatch:
    """A function that writes a batch file in ``root`` next to a copy of the fix-vulnerability
    example (``example/task.yaml``, ``example/project``, ``example/model.yaml``); without
    ``items``, one item in gate mode with that model script."""

    def write(
        items: list[dict[str, Any]] | None = None, name: str = "batch.yaml", **top: Any
    ) -> Path:
        example = root / "example"
        if not example.exists():
            (example / "project").mkdir(parents=True)
            for part in ("task.yaml", "model.yaml", "project/app.py"):
                (example / part).write_text((EXAMPLE / part).read_text())
        default = {
            "task": "example/task.yaml",
            "workdir": "example/project",
            "model_script": "example/model.yaml",
        }
        data = {**top, "items": items if items is not None else [default]}
        path = root / name
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        return path

    return write
