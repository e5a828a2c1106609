"""A three-stage pipeline for tests: each stage writes a Markdown file named after it."""

from __future__ import annotations

from typing import Any

THREE: dict[str, Any] = {
    "name": "three",
    "stages": [
        {"name": name, "prompt": f"Write {name}.md.", "exit_when": [{"file_exists": f"{name}.md"}]}
        for name in ("one", "two", "three")
    ],
}
"""Stages ``one``, ``two`` and ``three``; each passes once its ``<name>.md`` exists."""


def write_step(name: str) -> dict[str, Any]:
    """A script tool step writing ``<name>.md``."""
    return {"Write": {"file_path": f"{name}.md", "content": f"{name}\n"}}
