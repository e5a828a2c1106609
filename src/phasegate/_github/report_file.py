"""Reading a report file: bounded, and safe to name in a refusal.

The file is untrusted: anything may have replaced it between the step that wrote it and the
one that reads it. It is read in chunks up to a size bound; JSON nested deeper than Python's
parser goes is refused, not a crash; half a surrogate pair (JSON may escape one, no UTF-8
file or stream can hold one) becomes U+FFFD; and a refusal names a key of the file only in a
form that cannot make the message a workflow command, since the runner reads stderr too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from phasegate._files.limits import FileTooLargeError, read_bounded
from phasegate._files.text import well_formed
from phasegate._github.workflow_commands import without_legacy_mark
from phasegate.errors import _FileFieldError

MAX_REPORT_BYTES = 64 * 1024 * 1024
"""The largest report file read: 64 MiB (a report without its transcript is far smaller)."""

_PLAIN_KEY = re.compile(r"[A-Za-z0-9_]{1,100}")


def read_json_object(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path``, its text well formed; None when the file is missing or
    empty. Raises a usage error naming the file when it is anything else."""
    data = _read_report(path)
    if not data.strip():
        return None
    try:
        parsed = json.loads(data.decode("utf-8", errors="replace"))
    except json.JSONDecodeError as exc:
        raise _FileFieldError(path, None, f"not JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise _FileFieldError(path, None, "nested too deeply to be a phasegate report") from None
    if not isinstance(parsed, dict):
        raise _FileFieldError(path, None, "not a phasegate report (a JSON object)")
    return _well_formed_tree(parsed)


def field_location(location: Sequence[str | int]) -> str | None:
    """A field's location (``phases.0.name``) as a refusal names it. A key from the file may
    hold anything: one that is not a plain name is shown escaped, with no line break, ``:``
    or ``#`` left to make the message a workflow command."""
    parts = []
    for part in location:
        text = str(part)
        if not _PLAIN_KEY.fullmatch(text):
            text = ascii(text).replace(":", "\\x3a").replace("#", "\\x23")
        parts.append(text)
    return ".".join(parts) or None


def one_line(text: str) -> str:
    """``text`` with no line break and no ``##[`` (the runner's older command form)."""
    return without_legacy_mark(" ".join(text.splitlines()))


def _read_report(path: Path) -> bytes:
    """The report's bytes (none when the file does not exist), refused past the limit."""
    try:
        return read_bounded(path, MAX_REPORT_BYTES)
    except FileNotFoundError:
        return b""
    except OSError as exc:
        raise _FileFieldError(path, None, f"cannot read the report: {exc.strerror}") from None
    except FileTooLargeError:
        raise _FileFieldError(
            path, None, f"larger than {MAX_REPORT_BYTES} bytes: not a report"
        ) from None


def _well_formed_tree(value: dict[str, Any]) -> dict[str, Any]:
    """``value`` (a parsed JSON object, changed in place) with every lone surrogate in its
    strings, keys included, made U+FFFD. JSON may escape half a surrogate pair
    (``"\\ud800"``); no file the runner reads and no UTF-8 stream can hold one. Iterative:
    nesting depth costs no recursion."""
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            items = [(well_formed(k), v) for k, v in node.items()]
            node.clear()
            node.update((k, well_formed(v) if isinstance(v, str) else v) for k, v in items)
            children: Iterable[Any] = node.values()
        else:
            node[:] = [well_formed(v) if isinstance(v, str) else v for v in node]
            children = node
        stack.extend(child for child in children if isinstance(child, dict | list))
    return value
