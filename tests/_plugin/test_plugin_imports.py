"""The plugin's hook entry points import only what they use (``python -X importtime`` in a
subprocess, as the launcher starts them): a hook is a new process on every tool call."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.helpers.scenarios import EXAMPLE

SESSION = "imports-0000-0000-0000-000000000001"

NEVER = ("claude_agent_sdk", "phasegate.agents.claude", "typer", "rich", "structlog")
"""What no hook imports: the SDK (and its CLI adapter), the command line's libraries."""

REPORTS = ("phasegate.tasks.report", "phasegate.pipelines.report", "phasegate.recording.page")
"""The pydantic models of reports, and the page renderer: only a finished run needs them."""


def _imported(args: list[str], hook_input: Mapping[str, object], env: dict[str, str]) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "phasegate._plugin", *args],
        input=json.dumps(hook_input), env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }


@pytest.fixture
def gated(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A project whose session :data:`SESSION` runs the example task (started by ``run``)."""
    work = tmp_path / "work"
    shutil.copytree(EXAMPLE / "project", work)
    env = {**os.environ, "CLAUDE_CODE_SESSION_ID": SESSION, "CLAUDE_PROJECT_DIR": str(work)}
    subprocess.run(
        [sys.executable, "-m", "phasegate._plugin", "run", str(EXAMPLE / "task.yaml")],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert (work / ".phasegate/plugin" / SESSION / "state.json").is_file()
    return work, env


def _within(modules: set[str], packages: tuple[str, ...]) -> set[str]:
    return {m for m in modules if any(m == p or m.startswith(p + ".") for p in packages)}


@pytest.mark.parametrize("session", [SESSION, "other-0000-0000-0000-000000000002"])
@pytest.mark.parametrize("hook", ["pre", "post"])
def test_pre_and_post_tool_hooks_load_no_models_validators_or_sdk(
    gated: tuple[Path, dict[str, str]], hook: str, session: str
) -> None:
    """PreToolUse for a call the task does not guard, and PostToolUse, in the gated session
    and in another one: no pydantic at all, no validator, no report, no SDK."""
    work, env = gated
    call = {"session_id": session, "cwd": str(work), "tool_name": "Read",
            "tool_input": {"file_path": "app.py"}, "tool_use_id": "toolu_1",
            "hook_event_name": "PreToolUse" if hook == "pre" else "PostToolUse"}  # fmt: skip
    modules = _imported(["hook", hook], call, env)
    assert "phasegate._plugin.lean" in modules
    unwanted = ("pydantic", "phasegate.validators", "phasegate.phases", *NEVER, *REPORTS)
    assert not _within(modules, unwanted)


def test_the_stop_hook_loads_the_gate_but_no_sdk_cli_libraries_or_reports_while_it_blocks(
    gated: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """Stop, gate failing (nothing done yet): the gate and its validators, and none of the
    SDK, the command line's libraries, the report models or the page renderer."""
    work, env = gated
    log = tmp_path / "session.jsonl"
    prompt = json.loads((work / ".phasegate/plugin" / SESSION / "state.json").read_text())
    log.write_text(json.dumps({"type": "user", "cwd": str(work), "message": {"role": "user",
                   "content": f"phasegate run {prompt['run_id']}"}}) + "\n")  # fmt: skip
    stop = {"session_id": SESSION, "cwd": str(work), "transcript_path": str(log),
            "hook_event_name": "Stop", "stop_hook_active": False,
            "last_assistant_message": "Done."}  # fmt: skip
    modules = _imported(["hook", "stop"], stop, env)
    assert "phasegate.validators.judge" in modules
    assert not _within(modules, (*NEVER, *REPORTS))


def test_the_mcp_server_starts_and_lists_its_tools_on_the_standard_library_alone(
    gated: tuple[Path, dict[str, str]],
) -> None:
    """Claude Code starts the plugin's MCP server with every session: initialize and
    tools/list load no pydantic, no task model, no gate and no SDK."""
    _, env = gated
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "phasegate._plugin", "mcp"],
        input="".join(json.dumps(r) + "\n" for r in requests),
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["id"] for r in replies] == [1, 2]
    assert replies[0]["result"]["protocolVersion"] == "2025-11-25"
    assert [t["name"] for t in replies[1]["result"]["tools"]] == [
        "phase_complete", "submit_summary"
    ]  # fmt: skip
    modules = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "phasegate._plugin.mcp" in modules
    unwanted = ("pydantic", "phasegate.validators", "phasegate.phases", "phasegate.tasks",
                *NEVER, *REPORTS)  # fmt: skip
    assert not _within(modules, unwanted)


def test_the_stop_hook_of_a_task_without_a_schema_loads_no_schema_library(
    tmp_path: Path,
) -> None:
    """jsonschema and referencing load with the first schema checked: a task with no
    output schema and no JSON check never pays for them at a stop."""
    work = tmp_path / "work"
    shutil.copytree(EXAMPLE / "project", work)
    task = tmp_path / "edit.json"
    task.write_text(json.dumps({"name": "edit", "phases": [
        {"name": "edit", "instructions": "Fix app.py.", "require_tools": ["Edit"]}]}))  # fmt: skip
    env = {**os.environ, "CLAUDE_CODE_SESSION_ID": SESSION, "CLAUDE_PROJECT_DIR": str(work)}
    subprocess.run([sys.executable, "-m", "phasegate._plugin", "run", str(task)],
                   env=env, capture_output=True, text=True, check=True)  # fmt: skip
    state = json.loads((work / ".phasegate/plugin" / SESSION / "state.json").read_text())
    log = tmp_path / "session.jsonl"
    log.write_text(json.dumps({"type": "user", "cwd": str(work), "message": {"role": "user",
                   "content": f"phasegate run {state['run_id']}"}}) + "\n")  # fmt: skip
    stop = {"session_id": SESSION, "cwd": str(work), "transcript_path": str(log),
            "hook_event_name": "Stop", "stop_hook_active": False,
            "last_assistant_message": "Done."}  # fmt: skip
    modules = _imported(["hook", "stop"], stop, env)
    assert "phasegate.validators.judge" in modules
    assert not _within(modules, ("jsonschema", "referencing", "jsonschema_specifications"))
