"""Paths a definition names inside the work directory: relative, POSIX, never leaving it."""

from __future__ import annotations

import posixpath
import re
from typing import Annotated

from pydantic import AfterValidator

_DRIVE = re.compile(r"[A-Za-z]:")


def inside_workdir(value: str) -> str:
    """A relative POSIX path (or glob) that stays inside the work directory."""
    text = value.strip()
    if not text:
        raise ValueError("must not be empty")
    normal = posixpath.normpath(text.replace("\\", "/"))
    if (
        posixpath.isabs(normal)
        or _DRIVE.match(normal)
        or normal == ".."
        or normal.startswith("../")
    ):
        raise ValueError(
            f"{value!r} leaves the work directory; write a path relative to it, without '..'"
        )
    return normal


WorkdirPath = Annotated[str, AfterValidator(inside_workdir)]
"""A path or glob relative to the work directory."""


def protect_glob(value: str) -> str:
    """A ``protect`` glob as written: relative to the work directory, ``/`` between names.

    Stricter than :func:`inside_workdir`, which normalizes: a protect glob is matched as
    written, so a form that would need normalizing is refused with the form to write
    instead. A trailing ``/`` (``tests/``) is dropped: a glob naming a folder protects
    everything in it either way.
    """
    text = value.strip()
    if not text:
        raise ValueError("a protect glob must not be empty; write a path such as tests/**")
    if "\\" in text:
        raise ValueError(
            f"protect glob {value!r} holds a backslash; separate names with '/' "
            f"({text.replace(chr(92), '/')!r})"
        )
    if text.startswith("/") or _DRIVE.match(text):
        raise ValueError(
            f"protect glob {value!r} is absolute; write it relative to the work directory "
            "(tests/**, not /path/to/project/tests/**)"
        )
    segments = text.rstrip("/").split("/")
    if ".." in segments:
        raise ValueError(
            f"protect glob {value!r} has a '..' segment; only paths inside the work directory "
            "can be protected: write the path from the work directory down, without '..'"
        )
    if any(segment in ("", ".") for segment in segments):
        wanted = "/".join(s for s in segments if s not in ("", "."))
        raise ValueError(
            f"protect glob {value!r} has an empty or '.' segment; write {wanted!r}"
            if wanted
            else f"protect glob {value!r} names the work directory itself; name what to "
            "protect inside it (tests/**)"
        )
    return "/".join(segments)


ProtectGlob = Annotated[str, AfterValidator(protect_glob)]
"""A glob of paths the agent must not change, relative to the work directory (``tests/**``)."""
