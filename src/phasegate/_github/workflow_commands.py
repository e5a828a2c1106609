"""Workflow commands on stdout, escaped so untrusted text can never become one.

The runner treats a stdout line as a command when, after leading spaces, it starts with
``::name`` (or holds ``##[name`` anywhere), and it ends a line at ``\\r`` as well as ``\\n``.
An annotation we print is one line: its message escapes ``%``, ``\\r`` and ``\\n``, and its
properties (file, title) also ``:`` and ``,``, which would otherwise end a property or the
command itself. Untrusted text is never printed any other way.

``##[`` has no escape the runner undoes, and a line holding it is a command to a runner (or a
log viewer) that reads the legacy form even after a ``::`` command fails to parse: it is
shown as ``#\\x23[`` wherever untrusted text is printed, so no line we print holds it.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from typing import Literal

AnnotationLevel = Literal["error", "warning", "notice"]
"""The annotation commands the runner knows."""

_DATA = (("%", "%25"), ("\r", "%0D"), ("\n", "%0A"))
_PROPERTY = (*_DATA, (":", "%3A"), (",", "%2C"))


LEGACY_MARK = "##["
"""Where the runner's older command form starts, anywhere in a line."""

LEGACY_SHOWN = "#\\x23["
"""How untrusted text shows :data:`LEGACY_MARK`: the second ``#`` as its escape, visibly."""


def without_legacy_mark(text: str) -> str:
    """``text`` with every ``##[`` shown as ``#\\x23[``; no new ``##[`` can appear, since the
    replacement ends in ``[`` after a character that is not ``#``."""
    return text.replace(LEGACY_MARK, LEGACY_SHOWN)


def escape_data(text: str) -> str:
    """``text`` as the data of a workflow command (after the second ``::``)."""
    for plain, escaped in _DATA:
        text = text.replace(plain, escaped)
    return without_legacy_mark(text)


def escape_property(text: str) -> str:
    """``text`` as a property value of a workflow command (``file=``, ``title=``)."""
    for plain, escaped in _PROPERTY:
        text = text.replace(plain, escaped)
    return without_legacy_mark(text)


def inert_lines(text: str) -> str:
    """``text`` (holding untrusted parts) to print where a runner may read it as commands,
    outside a command: every line break the runner splits at (``\\r`` too) is a ``\\n``,
    no line holds ``##[``, and a line that would start with ``::`` after white space shows
    its first ``:`` as ``\\x3a``."""
    lines = []
    for line in re.split(r"\r\n|\r|\n", text):
        line = without_legacy_mark(line)
        stripped = line.lstrip()
        if stripped.startswith("::"):
            line = line[: len(line) - len(stripped)] + "\\x3a" + stripped[1:]
        lines.append(line)
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class Annotation:
    """One annotation: a message, and the workspace file it points at if any."""

    level: AnnotationLevel
    title: str
    message: str
    file: str | None = None

    def command(self) -> str:
        """The single stdout line that makes the runner show this annotation."""
        # The runner trims the property list and drops empty values; trimming here keeps
        # what it shows equal to what we meant.
        properties = [f"title={escape_property(self.title.strip())}"]
        if self.file is not None and self.file.strip():
            properties.insert(0, f"file={escape_property(self.file.strip())}")
        return f"::{self.level} {','.join(properties)}::{escape_data(self.message)}"


def random_token() -> str:
    """A token no one can guess: for ``stop-commands`` and heredoc delimiters."""
    return secrets.token_hex(16)
