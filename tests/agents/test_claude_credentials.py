"""What lets the Claude Code CLI reach a model, found by name and never by value."""

from __future__ import annotations

from pathlib import Path

from phasegate.agents.claude.credentials import (
    CREDENTIAL_VARS,
    credential_sources,
    has_credentials,
)


def test_credential_variables_are_named_in_their_documented_order(tmp_path: Path) -> None:
    """Set variables are listed by name (empty ones do not count); no login file here."""
    env = {"HOME": str(tmp_path), "ANTHROPIC_BASE_URL": "http://x", "ANTHROPIC_API_KEY": "k"}
    env["CLAUDE_CODE_OAUTH_TOKEN"] = ""

    found = credential_sources(env)

    assert found.variables == ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")
    assert found.variables == tuple(n for n in CREDENTIAL_VARS if env.get(n))
    assert found.login_file is None
    assert has_credentials(env)


def test_the_login_file_is_found_in_the_config_directory_or_under_home(tmp_path: Path) -> None:
    """CLAUDE_CONFIG_DIR wins over HOME/.claude, as the CLI reads it."""
    home_login = tmp_path / ".claude" / ".credentials.json"
    home_login.parent.mkdir()
    home_login.write_text("{}")
    config = tmp_path / "config"
    config.mkdir()

    assert credential_sources({"HOME": str(tmp_path)}).login_file == home_login
    elsewhere = {"HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": str(config)}
    assert credential_sources(elsewhere).login_file is None
    assert not has_credentials(elsewhere)
