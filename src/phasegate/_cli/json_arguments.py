"""Options that take JSON: the text itself, or ``@FILE`` to read it from a file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from phasegate.errors import UsageError


def json_argument(text: str | None, flag: str, *, lists: bool = False) -> Any:
    """The JSON ``text`` holds (``@FILE``: the JSON in FILE), None when not given.

    It must be an object (or, with ``lists``, a list of objects); anything else is a
    :class:`UsageError` naming ``flag`` and what to give instead.
    """
    if text is None:
        return None
    # Imported here: `phasegate --help` must not pay for YAML and pydantic.
    from phasegate._files import ParseProblem, parse_json, read_text

    source = f"{flag} {text}"
    if text.startswith("@"):
        path = Path(text[1:])
        source = f"{flag} file {path}"
        try:
            text = read_text(path)
        except OSError as exc:
            raise UsageError(f"{source}: cannot read it: {exc.strerror or exc}") from None
        except ParseProblem as exc:
            raise UsageError(f"{source} {exc}") from None
    try:
        data = parse_json(text)
    except ParseProblem as exc:
        raise UsageError(f"{source[:200]}: {exc}; give a JSON object, or @FILE") from None
    if isinstance(data, dict):
        return data
    if lists and isinstance(data, list) and all(isinstance(item, dict) for item in data):
        return data
    expected = "a JSON object or a list of them" if lists else "a JSON object"
    raise UsageError(f"{source[:200]}: expected {expected}, found {type(data).__name__}")
