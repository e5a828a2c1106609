"""What lets the Claude Code CLI reach a model: credential variables or its login file.

Only names are ever looked at (which variables are set, where the login file is), never a
value, so anything here may be shown to a user. Kept apart from the session's options so
that ``phasegate doctor`` asks without importing the task model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

CREDENTIAL_VARS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY",
)  # fmt: skip
"""Environment variables any one of which lets the CLI reach a model."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CredentialSources:
    """What could let the CLI reach a model, by name only: never a value."""

    variables: tuple[str, ...]
    """The :data:`CREDENTIAL_VARS` set (not empty), in that order."""
    login_file: Path | None
    """The login file Claude Code keeps in its config directory, when there is one."""

    def __bool__(self) -> bool:
        return bool(self.variables) or self.login_file is not None


def credential_sources(env: Mapping[str, str]) -> CredentialSources:
    """The credential variables set in ``env`` and the login file the CLI, run with ``env``,
    would find (``$CLAUDE_CONFIG_DIR/.credentials.json``, else ``~/.claude/``)."""
    home = Path(env.get("CLAUDE_CONFIG_DIR") or Path(env.get("HOME", "~")) / ".claude")
    login = home.expanduser() / ".credentials.json"
    return CredentialSources(
        variables=tuple(name for name in CREDENTIAL_VARS if env.get(name)),
        login_file=login if login.is_file() else None,
    )


def has_credentials(env: Mapping[str, str]) -> bool:
    """Whether the CLI, run with ``env``, could reach a model: a credential variable, or the
    login file Claude Code keeps in its config directory."""
    return bool(credential_sources(env))
