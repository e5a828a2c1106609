"""``ClaudeAgent(plugins=...)``: Claude Code plugin folders loaded into the agent's session
(the real CLI against the scripted model server), and a plugin it cannot load as a clear
error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from phasegate import ClaudeAgent, Runner, Task, UsageError
from phasegate.testing import Script
from phasegate.testing.pytest_plugin import ScriptedServerFactory
from tests.helpers.scenarios import EDIT, GOOD_JSON, MARKER, NO_RETRIES


def _plugin(folder: Path, manifest: dict[str, object]) -> Path:
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / ".claude-plugin/plugin.json").write_text(json.dumps(manifest))
    return folder


def _script() -> Script:
    return Script.model_validate(
        {"replies": [{"tools": [EDIT]}, {"text": f"{MARKER}\n{GOOD_JSON}"}]}
    )


@pytest.mark.cli
def test_a_plugin_given_to_the_agent_runs_its_hooks_in_an_isolated_session(
    task: Task, project: Path, tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """The plugin's PostToolUse hook runs for the agent's Edit (it writes the tool's name
    to a file), although the session loads none of the user's settings."""
    seen = tmp_path / "seen.txt"
    plugin = _plugin(tmp_path / "watcher", {"name": "watcher", "hooks": "./hooks.json"})
    command = f"cat > /dev/null; echo called >> {seen}"
    (plugin / "hooks.json").write_text(json.dumps(
        {"hooks": {"PostToolUse": [{"hooks": [{"type": "command", "command": command}]}]}}
    ))  # fmt: skip
    server = scripted_model_server(_script())
    agent = server.claude_agent(plugins=[plugin])

    report = Runner(agent, retry=NO_RETRIES).run_sync(task, project)

    assert report.verdict == "accepted", [i.message for i in report.issues]
    assert seen.read_text().splitlines() == ["called"]


@pytest.mark.cli
def test_a_plugin_claude_code_cannot_load_fails_the_run_naming_it_and_why(
    task: Task, project: Path, tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """The init message's plugin_errors become a usage error: the plugin, the failure type,
    Claude Code's message. (Claude Code sends that message as it starts its first turn, so
    on a loaded machine it may have asked the model already: not asserted.)"""
    plugin = _plugin(tmp_path / "broken", {"name": "broken", "hooks": "./missing.json"})
    server = scripted_model_server(_script())
    agent = server.claude_agent(plugins=[plugin])

    with pytest.raises(UsageError) as caught:
        Runner(agent, retry=NO_RETRIES).run_sync(task, project)

    message = str(caught.value)
    assert "broken" in message and "path-not-found" in message and "missing.json" in message
    assert caught.value.option == "plugins"


def test_a_plugin_path_that_is_not_a_folder_is_refused_before_any_session(
    tmp_path: Path,
) -> None:
    """Named in the error, with what to give instead."""
    with pytest.raises(UsageError, match="is not a folder") as caught:
        ClaudeAgent(plugins=[tmp_path / "nowhere"])
    assert caught.value.option == "plugins" and "nowhere" in str(caught.value)
