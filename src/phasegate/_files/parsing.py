"""Parsing the YAML and JSON of every file phasegate reads, within its limits.

Task, pipeline, schema, script and state files all go through :func:`read_text` and
:func:`parse_data`, so each is bounded the same way (:mod:`phasegate._files.limits`: regular
files only, never more than the size bound) and fails with a sentence instead of a
traceback, a hang or a ``MemoryError``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from phasegate._files.limits import (
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_NODES,
    ParseProblem,
    read_bounded,
    too_deep,
    too_many,
)
from phasegate._files.yaml_reading import parse_yaml


def read_text(path: Path, *, follow_links: bool = True) -> str:
    """The UTF-8 text of the regular file ``path`` (a byte-order mark dropped), refused past
    MAX_FILE_BYTES.

    Read with :func:`~phasegate._files.limits.read_bounded`: a FIFO, a directory or a device
    planted under the name is refused at once (:class:`NotRegularFileError`, an OSError),
    and with ``follow_links=False`` a symbolic link too. Raises OSError when the file cannot
    be read, ParseProblem when it is too large (:class:`FileTooLargeError`) or not UTF-8.
    Never reads more than the limit, even from a file that does not end.
    """
    raw = read_bounded(path, MAX_FILE_BYTES, follow_links=follow_links)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ParseProblem(f"is not UTF-8 text (byte {exc.start} cannot be decoded)") from None


def parse_data(text: str, *, json_syntax: bool) -> object:
    """``text`` parsed as JSON (``json_syntax``) or YAML, within the module's limits.

    Raises ParseProblem saying what is wrong and where (a line number when there is one).
    """
    return parse_json(text) if json_syntax else parse_yaml(text)


def parse_json(text: str) -> object:
    """JSON text as Python data; duplicate keys, deep nesting and huge numbers refused."""
    try:
        data = json.loads(text, object_pairs_hook=_json_object)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}"
        raise ParseProblem(f"invalid JSON at {where}: {exc.msg}") from None
    except RecursionError:
        raise ParseProblem(too_deep()) from None
    except ParseProblem:
        raise
    except ValueError as exc:  # a number past Python's digit limit
        raise ParseProblem(f"invalid JSON: {exc}") from None
    check_tree(data)
    return data


def _json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data = dict(pairs)
    if len(data) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ParseProblem(
                    f"the key {key!r} appears twice in one object; keep only one of them"
                )
            seen.add(key)
    return data


def check_tree(data: object) -> None:
    """MAX_DEPTH and MAX_NODES for parsed JSON (which has no aliases: a tree); raises
    ParseProblem."""
    count = 0
    stack: list[tuple[object, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        count += 1
        if depth > MAX_DEPTH:
            raise ParseProblem(too_deep())
        if count > MAX_NODES:
            raise ParseProblem(too_many())
        if isinstance(value, dict):
            stack.extend((item, depth + 1) for item in value.values())
        elif isinstance(value, list):
            stack.extend((item, depth + 1) for item in value)
