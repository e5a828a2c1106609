"""Options that take JSON: the text itself, or ``@FILE`` for a file holding it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from phasegate._files import ParseProblem, parse_json, read_text
from phasegate.errors import UsageError


def json_argument(text: str | None, option: str) -> dict[str, Any]:
    """The JSON object ``--<option>`` holds (``{}`` when it is not given); ``@FILE`` reads
    FILE. Bad JSON, or JSON that is not an object, is a :class:`UsageError` naming the
    option (and the file)."""
    if text is None:
        return {}
    flag = "--" + option.replace("_", "-")
    where = flag
    if text.startswith("@"):
        path = Path(text[1:])
        where = f"{flag} file {path}"
        try:
            text = read_text(path)
        except OSError as exc:
            raise UsageError(f"{where} cannot be read: {exc.strerror or exc}") from None
        except ParseProblem as exc:
            raise UsageError(f"{where}: {exc}") from None
    try:
        data = parse_json(text)
    except ParseProblem as exc:
        raise UsageError(f"{where} is not usable JSON: {exc}") from None
    if not isinstance(data, dict):
        raise UsageError(f"{where} must be a JSON object, not {type(data).__name__}")
    return data
