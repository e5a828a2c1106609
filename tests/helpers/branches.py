"""Pipelines with branches and their scripted replies, for the parallel pipeline tests.

Each stage writes ``NAME.txt`` and its exit check is that file; each branch's replies carry
the script's ``branch:`` key (None: the main line's), so the model server serves each branch
from its own place in the script.
"""

from __future__ import annotations

from typing import Any


def write_call(path: str, content: str) -> dict[str, Any]:
    """A scripted Write tool call of ``content`` to ``path``."""
    return {"Write": {"file_path": path, "content": content}}


def branch_stage(name: str, needs: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    """Stage ``name``: write ``NAME.txt``, checked by its existence; ``needs`` when given."""
    stage: dict[str, Any] = {
        "name": name,
        "prompt": f"Write {name}.txt.",
        "exit_when": [{"file_exists": f"{name}.txt"}],
        **extra,
    }
    if needs is not None:
        stage["needs"] = needs
    return stage


def branch_work(branch: str | None, name: str, content: str | None = None) -> list[dict[str, Any]]:
    """The two replies of stage ``name`` on ``branch``: the Write, then the last word."""
    key = {"branch": branch} if branch is not None else {}
    return [
        {**key, "tools": [write_call(f"{name}.txt", content or f"{name} done\n")]},
        {**key, "text": f"{name} is written."},
    ]
