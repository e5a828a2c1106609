"""HeadlessClaude: Claude Code run as ``claude -p`` without claude-agent-sdk (the plugin's
grader), against the scripted model server: isolated from the user's settings, plugins and
hooks, its prompt on standard input, bounded by its deadline; and which CLI it runs."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from phasegate.agents.claude.headless import (
    CLI_VARIABLE,
    HeadlessClaude,
    find_cli,
    session_env,
)
from phasegate.agents.protocol import AgentRequest, Confinement, EntryCollector
from phasegate.errors import AgentError, UsageError
from phasegate.evidence.transcript import Entry, RunResult, ToolCall, ToolResult
from phasegate.prompts.completion_tools import ToolSpec
from phasegate.testing import Script
from phasegate.testing.pytest_plugin import ScriptedServerFactory
from tests.helpers.plugin import claude

SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
READING = ("Read", "Grep", "Glob")


def _agent(env: dict[str, str], deadline: float | None = None) -> HeadlessClaude:
    return HeadlessClaude(
        claude(), model="haiku", max_turns=4, max_budget_usd=0.25, env=env, deadline=deadline
    )


def _run(agent: HeadlessClaude, prompt: str, work: Path, **request: Any) -> list[Entry]:
    collector = EntryCollector()
    asked = AgentRequest(prompt=prompt, workdir=work, toolset=READING, **request)
    asyncio.run(agent.run(asked, collector))
    return collector.entries


def _install_marking_plugin(home: Path, env: dict[str, str], mark: Path) -> None:
    """A plugin whose SessionStart and Stop hooks write ``mark``, installed and enabled in
    ``home``'s user settings as ``claude plugin install`` does, and a user settings Stop hook
    that writes it too."""
    plugin = home / "marking"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / "hooks").mkdir()
    hook = {"hooks": [{"type": "command", "command": f"echo plugin >> {mark}"}]}
    (plugin / "hooks" / "hooks.json").write_text(
        json.dumps({"hooks": {"SessionStart": [hook], "Stop": [hook]}})
    )
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "marking"}))
    (plugin / ".claude-plugin" / "marketplace.json").write_text(json.dumps({
        "name": "marks", "owner": {"name": "t"},
        "plugins": [{"name": "marking", "source": "./", "description": "marks"}],
    }))  # fmt: skip
    for command in (["marketplace", "add", str(plugin)], ["install", "marking@marks"]):
        done = subprocess.run([str(claude()), "plugin", *command], env=env, capture_output=True,
                              text=True, timeout=120)  # fmt: skip
        assert done.returncode == 0, done.stderr + done.stdout
    settings = home / ".claude" / "settings.json"
    written = json.loads(settings.read_text())
    assert written["enabledPlugins"] == {"marking@marks": True}
    user_hook = {"hooks": [{"type": "command", "command": f"echo user >> {mark}"}]}
    settings.write_text(json.dumps({**written, "hooks": {"Stop": [user_hook]}}))


@pytest.mark.cli
def test_a_headless_session_loads_none_of_the_users_plugins_hooks_or_settings(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """With a plugin installed and a Stop hook in the user's settings, a plain ``claude -p``
    runs both hooks; a headless session runs neither, offers only the reading tools and
    StructuredOutput, reads in the work directory and is refused outside it, and its
    verdict comes back as the StructuredOutput call's input."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "design.md").write_text("GET /users\n")
    secret = tmp_path / "secret.txt"
    secret.write_text("outside")
    server = scripted_model_server(Script.model_validate({"replies": [
        {"text": "plain session"},
        {"tools": [{"Read": {"file_path": "design.md"}}, {"Read": {"file_path": str(secret)}}]},
        {"when": "tool_error", "tools": [{"StructuredOutput": {"ok": True}}]},
    ]}))  # fmt: skip
    env = {**os.environ, **server.env()}
    mark = tmp_path / "hooks-ran"
    _install_marking_plugin(Path(env["HOME"]), env, mark)
    plain = subprocess.run([str(claude()), "-p", "hi"], cwd=work, env=env, capture_output=True,
                           text=True, timeout=120)  # fmt: skip
    assert plain.returncode == 0, plain.stderr
    assert sorted(mark.read_text().split()) == ["plugin", "plugin", "user"]
    mark.unlink()

    entries = _run(_agent(session_env(env)), "Judge it.", work, output_schema=SCHEMA)

    assert not mark.exists()
    (request, _) = server.main_requests()[1:]
    offered = sorted(t["name"] for t in (request.body or {})["tools"] if not t.get("defer_loading"))
    assert offered == ["Glob", "Grep", "Read", "StructuredOutput"]
    results = {e.tool_use_id: e for e in entries if isinstance(e, ToolResult)}
    calls = [e for e in entries if isinstance(e, ToolCall)]
    assert [c.name for c in calls] == ["Read", "Read", "StructuredOutput"]
    assert results[calls[0].id].ok and "GET /users" in results[calls[0].id].content
    assert not results[calls[1].id].ok and "outside" not in results[calls[1].id].content
    assert calls[2].input == {"ok": True}
    (result,) = [e for e in entries if isinstance(e, RunResult)]
    assert not result.is_error


@pytest.mark.cli
def test_a_prompt_longer_than_one_argument_may_be_reaches_the_model_whole(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """The prompt goes on standard input: 300,000 characters (Linux takes at most 131,072
    bytes in one argument) arrive whole."""
    server = scripted_model_server(Script.model_validate({"replies": [{"text": "read"}]}))
    prompt = "evidence " * 33_334
    _run(_agent({**os.environ, **server.env()}), prompt, tmp_path)
    (request,) = server.main_requests()
    assert request.last_text == prompt.strip()


@pytest.mark.cli
def test_a_session_past_its_deadline_is_ended_with_an_agent_error(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """A model that never answers: the session is ended at its deadline, the error says so;
    a deadline too close starts nothing."""
    server = scripted_model_server(Script.model_validate({"replies": [{"hang": True}]}))
    env = {**os.environ, **server.env()}
    with pytest.raises(AgentError, match="ran past the 6 s it was given"):
        _run(_agent(env, deadline=time.time() + 6.4), "Judge it.", tmp_path)
    with pytest.raises(AgentError, match="was not started: 2 s were left"):
        _run(_agent(env, deadline=time.time() + 2.4), "Judge it.", tmp_path)
    assert len(server.main_requests()) == 1


def test_a_cli_that_cannot_start_is_an_agent_error(tmp_path: Path) -> None:
    """A file that is not executable: an AgentError naming it, never an OSError."""
    cli = tmp_path / "claude"
    cli.write_text("not a program")
    agent = HeadlessClaude(cli, model="haiku", max_turns=1, max_budget_usd=0.1, env={})
    with pytest.raises(AgentError, match="could not be started"):
        _run(agent, "Judge it.", tmp_path)


def test_a_request_beyond_a_graders_is_refused(tmp_path: Path) -> None:
    """Completion tools, checked calls, a sandbox or a resumed session: a usage error, and
    nothing started."""
    agent = HeadlessClaude(tmp_path / "none", model="haiku", max_turns=1, max_budget_usd=0.1,
                           env={})  # fmt: skip
    for extra in ({"tools": (ToolSpec(name="phase_complete", description="d", input_schema={}),)},
                  {"check_before": "all"}, {"confinement": Confinement()},
                  {"resume": "abc"}):  # fmt: skip
        with pytest.raises(UsageError, match="runs a grader's requests only"):
            _run(agent, "Judge it.", tmp_path, **extra)


def _executable(folder: Path, name: str) -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_the_cli_is_the_one_named_else_claude_on_path_else_a_reason(tmp_path: Path) -> None:
    """PHASEGATE_CLAUDE_CLI (a path, or a command on PATH) first; else ``claude`` on PATH;
    a name that is not there is a reason, with no fallback; no claude at all is a reason
    that says what to set."""
    on_path = _executable(tmp_path / "bin", "claude")
    other = _executable(tmp_path / "opt", "my-claude")
    path = str(tmp_path / "bin")
    assert find_cli({"PATH": path}) == on_path
    assert find_cli({"PATH": path, CLI_VARIABLE: str(other)}) == other
    assert find_cli({"PATH": f"{path}:{tmp_path / 'opt'}", CLI_VARIABLE: "my-claude"}) == other
    missing = find_cli({"PATH": path, CLI_VARIABLE: str(tmp_path / "gone")})
    assert isinstance(missing, str) and "not an executable file" in missing
    none = find_cli({"PATH": str(tmp_path / "empty")})
    assert isinstance(none, str) and "no 'claude' on PATH" in none and CLI_VARIABLE in none


def test_a_headless_session_gets_none_of_the_hooks_session_variables() -> None:
    """What Claude Code sets for its hook's session goes; the connection's variables stay."""
    hook_env = {
        "CLAUDECODE": "1", "CLAUDE_CODE_SESSION_ID": "s", "CLAUDE_PID": "9",
        "CLAUDE_PLUGIN_ROOT": "/p", "CLAUDE_PROJECT_DIR": "/w", "CLAUDE_CODE_ENTRYPOINT": "cli",
        "ANTHROPIC_BASE_URL": "http://x", "CLAUDE_CONFIG_DIR": "/c", "PATH": "/bin",
        "CLAUDE_CODE_USE_BEDROCK": "1",
    }  # fmt: skip
    assert session_env(hook_env) == {
        "ANTHROPIC_BASE_URL": "http://x", "CLAUDE_CONFIG_DIR": "/c", "PATH": "/bin",
        "CLAUDE_CODE_USE_BEDROCK": "1",
    }  # fmt: skip
