"""A service root: the example task, its project, a small pipeline and model scripts."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import yaml

from tests.helpers.three_stages import THREE, write_step

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fix-vulnerability"

STAGES_FROM_TWO: list[dict[str, Any]] = [
    {"contains": "Stage 2 of 3: two", "tools": [write_step("two")]},
    {"when": "tool_result", "text": "Two done."},
    {"contains": "Stage 3 of 3: three", "tools": [write_step("three")]},
    {"when": "tool_result", "text": "Three done."},
]
"""The pipeline's model from stage 2 on (also what a resumed run needs)."""

SCRIPTS: dict[str, list[dict[str, Any]]] = {
    "pipeline.yaml": [
        {"contains": "Stage 1 of 3: one", "tools": [write_step("one")]},
        {"when": "tool_result", "text": "One done."},
        *STAGES_FROM_TWO,
    ],
    "hang-in-stage-two.yaml": [
        {"contains": "Stage 1 of 3: one", "tools": [write_step("one")]},
        {"when": "tool_result", "text": "One done."},
        {"contains": "Stage 2 of 3: two", "hang": True},
    ],
    "resume.yaml": [
        {"contains": "was interrupted", "tools": [write_step("two")]},
        {"when": "tool_result", "text": "Two done."},
        {"contains": "Stage 3 of 3: three", "tools": [write_step("three")]},
        {"when": "tool_result", "text": "Three done."},
    ],
    "hang.yaml": [
        {"text": "Looking.", "tools": [{"Read": {"file_path": "app.py"}}]},
        {"when": "tool_result", "hang": True},
    ],
}


def make_root(base: Path) -> Path:
    """Make ``base`` a service root: ``task.yaml`` (fix-vulnerability), ``project/``,
    ``three.yaml`` (three stages writing one.md, two.md, three.md), ``empty/``, and the
    model scripts in ``scripts/``: ``task.yaml`` (the example's) and those of
    :data:`SCRIPTS`."""
    shutil.copytree(EXAMPLE / "project", base / "project")
    shutil.copy(EXAMPLE / "task.yaml", base / "task.yaml")
    (base / "three.yaml").write_text(yaml.safe_dump(THREE))
    (base / "empty").mkdir()
    scripts = base / "scripts"
    scripts.mkdir()
    shutil.copy(EXAMPLE / "model.yaml", scripts / "task.yaml")
    for name, replies in SCRIPTS.items():
        (scripts / name).write_text(yaml.safe_dump({"replies": replies}))
    return base
