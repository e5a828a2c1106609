"""Matching relative POSIX paths against globs (``changed`` exit checks, infer rules).

``*``, ``?`` and ``[...]`` match within one path segment and never cross a ``/``; a ``**``
segment matches any number of whole directories, none included, so ``src/**/*.py`` matches
``src/a.py`` and ``src/x/y/a.py``. Every other character, regex metacharacters included, is
literal. Python 3.11 has no ``PurePath.full_match``, and :mod:`fnmatch` lets ``*`` cross
``/``, hence this module.
"""

from __future__ import annotations

import functools
import re

GLOB_CACHE_SIZE = 256
"""Compiled globs kept: a pipeline has a handful, checked again after every round."""


def glob_matches(glob: str, path: str) -> bool:
    """Whether the relative POSIX ``path`` matches ``glob``."""
    return _glob_regex(glob).fullmatch(path) is not None


@functools.lru_cache(maxsize=GLOB_CACHE_SIZE)
def _glob_regex(glob: str) -> re.Pattern[str]:
    """``glob`` as a regex for :meth:`re.Pattern.fullmatch`."""
    segments = glob.split("/")
    pattern = ""
    for position, segment in enumerate(segments):
        last = position == len(segments) - 1
        if segment == "**":
            # Zero or more whole directories; at the end, everything below.
            pattern += ".*" if last else "(?:[^/]+/)*"
        else:
            pattern += _segment_regex(segment) + ("" if last else "/")
    return re.compile(pattern, re.DOTALL)


def _segment_regex(segment: str) -> str:
    """One path segment (no ``/`` in it) of a glob, as a regex that never matches ``/``."""
    out: list[str] = []
    i, n = 0, len(segment)
    while i < n:
        char = segment[i]
        i += 1
        if char == "*":
            if not out or out[-1] != "[^/]*":  # "**" inside a segment is just "*"
                out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = i + 1 if i < n and segment[i] == "!" else i
            end += 1 if end < n and segment[end] == "]" else 0  # a leading "]" is literal
            end = segment.find("]", end)
            if end < 0:
                out.append(re.escape(char))  # no closing "]": a literal "["
                continue
            body, i = segment[i:end], end + 1
            negated = body.startswith("!")
            # Escape every member but "-" (ranges), so "^", "\\", "[" and "&&" stay literal.
            members = "".join(
                "-" if c == "-" else re.escape(c) for c in (body[1:] if negated else body)
            )
            out.append(f"[^/{members}]" if negated else f"[{members}]")
        else:
            out.append(re.escape(char))
    return "".join(out)
