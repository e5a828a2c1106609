"""The plugin's hook entry points import only what they use (``python -X importtime`` in a
subprocess, as the launcher starts them): a hook is a new process on every tool call, and
the Stop hook runs at the end of every turn of every session (``bench/hooks.py`` times them)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.imports import imports_of
from tests.helpers.scenarios import BUGGY_LINE, EXAMPLE, FIXED_LINE, GOOD_JSON, MARKER

SESSION = "imports-0000-0000-0000-000000000001"

NEVER = ("claude_agent_sdk", "phasegate.agents.claude", "typer", "rich", "structlog")
"""What no hook imports: the SDK (and its CLI adapter), the command line's libraries."""

REPORTS = ("phasegate.tasks.report", "phasegate.pipelines.report", "phasegate.recording.page")
"""The pydantic models of reports, and the page renderer: only a finished run needs them."""


CHECKS = ("phasegate.validators.stage_checks", "phasegate.workspace.checks",
          "phasegate._plugin.checks")  # fmt: skip
"""What runs checks: their evaluation, the disk that runs their commands, the plugin's
bounds. (The check models load with every task: a task's phases may hold checks.)"""

NOT_AT_A_STOP = (*CHECKS, "phasegate.pipelines", "phasegate._plugin.flows", "urllib.request",
                 "http.client")  # fmt: skip
"""What the Stop hook of a task without checks never loads: what runs checks, a pipeline's
runner, and ``urllib.request`` (reading a schema's file URI needs ``urllib.parse`` only)."""

GATE = ("pydantic", "yaml", "jsonschema", "phasegate.evidence", "phasegate.phases",
        "phasegate.validators", "phasegate.tasks", "phasegate.telemetry",
        "phasegate._plugin.gated", "phasegate._plugin.flows")  # fmt: skip
"""The gate and what it is built on: none of it loads for a session with nothing gated."""


def _stop(hook_input: Mapping[str, object], env: dict[str, str]) -> tuple[set[str], str]:
    """The modules a Stop hook imported for ``hook_input``, and what it printed."""
    done = imports_of("-m", "phasegate._plugin", "hook", "stop", stdin=json.dumps(hook_input),
                      env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return set(done.modules), done.stdout


def _imported(args: list[str], hook_input: Mapping[str, object], env: dict[str, str]) -> set[str]:
    done = imports_of("-m", "phasegate._plugin", *args, stdin=json.dumps(hook_input), env=env)
    assert done.returncode == 0, done.stderr
    return set(done.modules)


@pytest.fixture
def gated(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A project whose session :data:`SESSION` runs the example task (started by ``run``),
    without a warm gate: these are the imports of a Stop hook that does the work itself."""
    work = tmp_path / "work"
    shutil.copytree(EXAMPLE / "project", work)
    env = {**os.environ, "CLAUDE_CODE_SESSION_ID": SESSION, "CLAUDE_PROJECT_DIR": str(work),
           "PHASEGATE_PLUGIN_WARM": "0"}  # fmt: skip
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
    SDK, the command line's libraries, the report models, the recorder or the page
    renderer (only a finished run writes a recording), nor a pipeline's stage checks."""
    work, env = gated
    log = tmp_path / "session.jsonl"
    prompt = json.loads((work / ".phasegate/plugin" / SESSION / "state.json").read_text())
    log.write_text(json.dumps({"type": "user", "cwd": str(work), "message": {"role": "user",
                   "content": f"phasegate run {prompt['run_id']}"}}) + "\n")  # fmt: skip
    stop = {"session_id": SESSION, "cwd": str(work), "transcript_path": str(log),
            "hook_event_name": "Stop", "stop_hook_active": False,
            "last_assistant_message": "Done."}  # fmt: skip
    modules, out = _stop(stop, env)
    assert json.loads(out)["decision"] == "block"
    assert "phasegate.validators.judge" in modules
    recorder = ("phasegate.recording.recorder", "phasegate.recording.files")
    assert not _within(modules, (*NEVER, *REPORTS, *recorder, *NOT_AT_A_STOP))


def test_the_stop_hook_that_accepts_the_task_loads_its_report_and_page_and_nothing_more(
    gated: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """Stop, gate passing (the fix made and claimed): the report, the recorder and the page
    renderer load, since the run ends here; still no SDK, command line library, pipeline
    report or stage check."""
    work, env = gated
    state = json.loads((work / ".phasegate/plugin" / SESSION / "state.json").read_text())
    app = work / "app.py"
    app.write_text(app.read_text().replace(BUGGY_LINE, FIXED_LINE))
    edit = {"file_path": str(app), "old_string": BUGGY_LINE, "new_string": FIXED_LINE}
    claim = f"{MARKER}\n\n{GOOD_JSON}"
    lines: list[dict[str, Any]] = [
        {"role": "user", "content": f"phasegate run {state['run_id']}"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Edit",
                                           "input": edit}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                      "content": "ok"}]},
        {"role": "assistant", "content": [{"type": "text", "text": claim}]},
    ]  # fmt: skip
    log = tmp_path / "session.jsonl"
    log.write_text("".join(json.dumps({"type": m["role"], "cwd": str(work), "uuid": str(i),
                   "message": m | ({"id": f"msg_{i}", "model": "m", "type": "message"}
                                   if m["role"] == "assistant" else {})}) + "\n"
                   for i, m in enumerate(lines)))  # fmt: skip
    stop = {"session_id": SESSION, "cwd": str(work), "transcript_path": str(log),
            "hook_event_name": "Stop", "stop_hook_active": False,
            "last_assistant_message": claim}  # fmt: skip
    modules, out = _stop(stop, env)
    assert "accepted" in json.loads(out)["systemMessage"]
    assert {"phasegate.tasks.report", "phasegate.recording.page"} <= modules
    assert not _within(modules, (*NEVER, "phasegate.pipelines.report", *NOT_AT_A_STOP))


@pytest.mark.parametrize("session", ["other-0000-0000-0000-000000000002", SESSION])
def test_a_stop_with_nothing_running_in_its_session_loads_no_gate_nor_pydantic(
    gated: tuple[Path, dict[str, str]], tmp_path: Path, session: str
) -> None:
    """The Stop hook at the end of every turn of a session with nothing gated (another
    session of the gated project; this session once its task is stopped) answers from the
    session's state alone: no gate, no model, no pydantic, and says nothing."""
    work, env = gated
    if session == SESSION:
        ended = subprocess.run([sys.executable, "-m", "phasegate._plugin", "stop"], env=env,
                               capture_output=True, text=True, check=True)  # fmt: skip
        assert "is stopped" in ended.stdout
    log = tmp_path / "session.jsonl"
    log.write_text(json.dumps({"type": "user", "cwd": str(work), "message": {"role": "user",
                   "content": "hello"}}) + "\n")  # fmt: skip
    stop = {"session_id": session, "cwd": str(work), "transcript_path": str(log),
            "hook_event_name": "Stop", "stop_hook_active": False,
            "last_assistant_message": "Done."}  # fmt: skip
    modules, out = _stop(stop, env)
    assert out == ""
    assert "phasegate._plugin.dispatch" in modules
    assert not _within(modules, (*GATE, *NEVER, *REPORTS))


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


def test_the_stop_hook_of_a_task_with_checks_loads_what_runs_them(tmp_path: Path) -> None:
    """What a task without checks never loads is what a task with a check needs at a stop
    (the names the tests above hold out are the ones that run checks)."""
    work = tmp_path / "work"
    shutil.copytree(EXAMPLE / "project", work)
    task = tmp_path / "checked.json"
    task.write_text(json.dumps({"name": "checked", "phases": [
        {"name": "edit", "instructions": "Fix app.py.", "checks": [{"file_exists": "app.py"}]}
    ]}))  # fmt: skip
    env = {**os.environ, "CLAUDE_CODE_SESSION_ID": SESSION, "CLAUDE_PROJECT_DIR": str(work),
           "PHASEGATE_PLUGIN_WARM": "0"}  # fmt: skip
    subprocess.run([sys.executable, "-m", "phasegate._plugin", "run", str(task)],
                   env=env, capture_output=True, text=True, check=True)  # fmt: skip
    state = json.loads((work / ".phasegate/plugin" / SESSION / "state.json").read_text())
    log = tmp_path / "session.jsonl"
    log.write_text(json.dumps({"type": "user", "cwd": str(work), "message": {"role": "user",
                   "content": f"phasegate run {state['run_id']}"}}) + "\n")  # fmt: skip
    stop = {"session_id": SESSION, "cwd": str(work), "transcript_path": str(log),
            "hook_event_name": "Stop", "stop_hook_active": False,
            "last_assistant_message": "PHASE 1 COMPLETE: done"}  # fmt: skip
    modules, _ = _stop(stop, env)
    assert _within(modules, CHECKS) == set(CHECKS)
