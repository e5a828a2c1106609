"""Paths a definition names inside the work directory: relative, POSIX, never leaving it."""

from __future__ import annotations

import posixpath
from typing import Annotated

from pydantic import AfterValidator


def inside_workdir(value: str) -> str:
    """A relative POSIX path (or glob) that stays inside the work directory."""
    text = value.strip()
    if not text:
        raise ValueError("must not be empty")
    normal = posixpath.normpath(text.replace("\\", "/"))
    if posixpath.isabs(normal) or normal == ".." or normal.startswith("../"):
        raise ValueError(
            f"{value!r} leaves the work directory; write a path relative to it, without '..'"
        )
    return normal


WorkdirPath = Annotated[str, AfterValidator(inside_workdir)]
"""A path or glob relative to the work directory."""
