"""The plugin's completion tools in a real session: its MCP server (started by Claude Code
from the plugin's manifest) answers ``phase_complete`` and ``submit_summary`` with the gate
``phasegate run`` uses, for the task gated in that session."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from phasegate._plugin.mcp import TOOLS
from phasegate.phases.loading import load_task
from phasegate.prompts.completion_tools import completion_tools
from phasegate.testing import Script
from phasegate.testing.pytest_plugin import ScriptedServerFactory
from tests.helpers.plugin import plugin_env, run_claude, session_state
from tests.helpers.scenarios import EDIT, EXAMPLE, FIXED_LINE

PREFIX = "mcp__plugin_phasegate_phasegate__"
SUMMARY = {"files_changed": ["app.py"], "description": "Replaced eval with float parsing."}


def test_the_listed_tools_take_the_input_phasegate_run_offers() -> None:
    """The server lists its tools without loading a task: their names and input schemas
    are those of :func:`completion_tools` for a task with both kinds of phase."""
    task = load_task(EXAMPLE / "task.yaml")
    offered = {tool.name: tool.input_schema for tool in completion_tools(task)}
    assert {tool["name"]: tool["inputSchema"] for tool in TOOLS} == offered


def _results(messages: list[dict[str, Any]]) -> dict[str, str]:
    """Every tool result's text in the session, by tool use id."""
    found = {}
    for message in messages:
        content = (message.get("message") or {}).get("content")
        for block in content if isinstance(content, list) else ():
            if block.get("type") == "tool_result":
                inner = block.get("content")
                text = (
                    inner
                    if isinstance(inner, str)
                    else "".join(part.get("text", "") for part in inner or ())
                )
                found[block["tool_use_id"]] = text
    return found


@pytest.mark.cli
def test_a_task_that_completes_by_tool_is_judged_at_each_call_then_accepted(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """``completion: tool``: phase_complete before the edit is answered validation_failed
    with the gate's issues; after the Edit it succeeds, submit_summary succeeds, and the
    Stop hook accepts the task; each tool check is in the state and the events."""
    task_file = tmp_path / "task.json"
    task = load_task(EXAMPLE / "task.yaml").model_dump(mode="json", exclude_none=True)
    task_file.write_text(json.dumps({**task, "completion": "tool"}))
    complete = {f"{PREFIX}phase_complete": {"phase": 1, "note": "fixed app.py"}}
    server = scripted_model_server(
        Script.model_validate(
            {
                "replies": [
                    {"tools": [complete]},
                    {"tools": [EDIT]},
                    {"tools": [complete]},
                    {"tools": [{f"{PREFIX}submit_summary": {"summary": SUMMARY}}]},
                    {"text": "Done."},
                ]
            }
        )
    )
    work = tmp_path / "project"
    shutil.copytree(EXAMPLE / "project", work)
    session = run_claude(f"/phasegate:run {task_file}", work, plugin_env(server))

    assert session.code == 0, session.stderr
    answers = [json.loads(text) for text in _results(session.messages).values()
               if text.startswith("{")]  # fmt: skip
    assert [a["result"] for a in answers] == ["validation_failed", "success", "success"]
    assert answers[0]["attempted"] == {"tool": "phase_complete", "phase": 1, "note": "fixed app.py"}
    assert answers[0]["issue_count"] >= 1
    state = session_state(work, session.session_id)
    assert state["status"] == "accepted", state["last_issues"]
    assert [(c["trigger"], c["accepted"]) for c in state["checks"]] == [
        ("tool", False), ("tool", True), ("tool", True), ("stop", True)
    ]  # fmt: skip
    assert state["report"]["summary"] == SUMMARY
    assert (work / "app.py").read_text().count(FIXED_LINE) == 1
    events = [
        json.loads(line) for line in (work / ".phasegate/events.jsonl").read_text().splitlines()
    ]
    assert [e["tool"] for e in events if e["event"] == "phase.gate" and e["trigger"] == "tool"][
        :1
    ] == ["phase_complete"]
    assert server.unmatched == []
