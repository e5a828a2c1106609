"""Workflow commands on stdout, escaped so untrusted text can never become one.

The runner treats a stdout line as a command when, after leading spaces, it starts with
``::name`` (or holds ``##[name`` anywhere), and it ends a line at ``\\r`` as well as ``\\n``.
An annotation we print is one line: its message escapes ``%``, ``\\r`` and ``\\n``, and its
properties (file, title) also ``:`` and ``,``, which would otherwise end a property or the
command itself. Untrusted text is never printed any other way.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Literal

AnnotationLevel = Literal["error", "warning", "notice"]
"""The annotation commands the runner knows."""

_DATA = (("%", "%25"), ("\r", "%0D"), ("\n", "%0A"))
_PROPERTY = (*_DATA, (":", "%3A"), (",", "%2C"))


def escape_data(text: str) -> str:
    """``text`` as the data of a workflow command (after the second ``::``)."""
    for plain, escaped in _DATA:
        text = text.replace(plain, escaped)
    return text


def escape_property(text: str) -> str:
    """``text`` as a property value of a workflow command (``file=``, ``title=``)."""
    for plain, escaped in _PROPERTY:
        text = text.replace(plain, escaped)
    return text


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
