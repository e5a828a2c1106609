"""Secrets inside what phasegate shows: the one place that recognises them and hides them.

Whatever phasegate shows that may hold a secret passes through :func:`redact` (data) or
:func:`redact_text` (one string): event log lines, the service's answers, and every value
an input is inferred with, so plans, prompts, reports and the events that carry inputs see
only the redacted text. Hidden, each replaced by ``[redacted]``:

- values of fields named like keys, tokens, passwords, credentials or cookies (data only);
- ``Authorization``, ``Proxy-Authorization`` and ``x-api-key`` header values, ``Bearer`` and
  ``Basic`` credentials, ``sk-...`` keys;
- credentials inside URLs: ``https://user:token@host/`` becomes
  ``https://[redacted]@host/`` (so does a long user name alone, which is how a token is often
  given: ``https://ghp_...@github.com/``); a short plain user (``ssh://git@host``) stays;
- the values of the process's own secret environment variables, and any text the caller
  names (``secrets``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

REDACTED = "[redacted]"

_SECRET_NAME = re.compile(r"(?i)(api[_-]?key|auth|token|secret|password|credential|cookie)")
_SECRET_TEXT = [
    re.compile(
        r"(?i)\b(authorization|proxy-authorization|x-api-key)(\"?\s*[:=]\s*\"?)"
        r"(?:(?:bearer|basic)\s+)?[^\s\",}]+"
    ),
    re.compile(r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(r"()()\bsk-[A-Za-z0-9_-]{6,}"),
]
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)([^\s/?#@\"'<>]+)@")
"""A URL's scheme and the user information before its host (``user:password@``)."""
_PLAIN_USER = re.compile(r"[A-Za-z0-9._-]{1,15}")
"""A user name that is only a name (``git``, ``deploy``): kept when no password follows."""
_MIN_SECRET_LENGTH = 8


def redact(value: Any, secrets: Sequence[str] = ()) -> Any:
    """``value`` with every secret replaced by ``[redacted]`` (mappings, lists and strings)."""
    if isinstance(value, Mapping):
        return {
            key: REDACTED
            if isinstance(key, str) and _SECRET_NAME.search(key) and _is_secret_value(item)
            else redact(item, secrets)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(item, secrets) for item in value]
    if isinstance(value, str):
        return redact_text(value, secrets)
    return value


def redact_text(text: str, secrets: Sequence[str] = ()) -> str:
    """``text`` with every secret it holds replaced by ``[redacted]`` (see the module)."""
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    for pattern in _SECRET_TEXT:
        text = pattern.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    return _URL_USERINFO.sub(_url_userinfo, text)


def _url_userinfo(match: re.Match[str]) -> str:
    scheme, userinfo = match.group(1), match.group(2)
    if ":" not in userinfo and _PLAIN_USER.fullmatch(userinfo):
        return match.group(0)
    return f"{scheme}{REDACTED}@"


def _is_secret_value(value: object) -> bool:
    # Counts like input_tokens are numbers, not secrets: only text is hidden.
    return isinstance(value, str) and bool(value)


def environment_secrets(environ: Mapping[str, str]) -> list[str]:
    """Values of environment variables that hold secrets (long enough to be one)."""
    found = {
        value
        for name, value in environ.items()
        if _SECRET_NAME.search(name) and len(value) >= _MIN_SECRET_LENGTH
    }
    return sorted(found, key=len, reverse=True)
