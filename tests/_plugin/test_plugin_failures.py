"""The plugin when things go wrong or happen at once: a Stop hook that crashes, no Python to
run phasegate with, a CLI killed mid-task and resumed, two gated sessions in one project."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from phasegate.testing import HttpFault, Script, load_script
from phasegate.testing.pytest_plugin import ScriptedServerFactory
from tests.helpers.plugin import (
    finish,
    plugin_env,
    run_claude,
    session_state,
    start_claude,
    wait_for_requests,
)
from tests.helpers.scenarios import EDIT, EXAMPLE, GOOD_JSON, MARKER

pytestmark = pytest.mark.cli

TASK = EXAMPLE / "task.yaml"


def _project(tmp_path: Path, name: str = "work") -> Path:
    work = tmp_path / name
    shutil.copytree(EXAMPLE / "project", work)
    return work


def _script(replies: list[dict[str, Any]]) -> Script:
    return Script.model_validate({"replies": replies})


def _notices(messages: list[dict[str, Any]]) -> list[str]:
    return [m["content"] for m in messages if m.get("subtype") == "informational"]


def test_a_stop_hook_that_crashes_ends_the_turn_with_one_line_and_no_loop(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """The task file turns unreadable mid-task (the model overwrites it): the Stop hook
    cannot judge, says so in one line, and the turn ends; the gated work stays open."""
    work = _project(tmp_path)
    shutil.copy(TASK, work / "task.yaml")
    server = scripted_model_server(
        _script(
            [
                {"tools": [{"Write": {"file_path": "task.yaml", "content": "phases: [\n"}}]},
                {"text": "Done."},
            ]
        )
    )
    session = run_claude("/phasegate:run task.yaml", work, plugin_env(server))
    assert session.code == 0 and not session.result["is_error"], session.stderr
    (notice,) = _notices(session.messages)
    assert "the gate check failed" in notice and "/phasegate:stop" in notice
    assert len(server.main_requests()) == 2  # the write, then the end: no block, no loop
    assert session_state(work, session.session_id)["status"] == "running"


def test_without_a_usable_python_the_session_goes_on_with_one_message_and_the_fix(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """No phasegate anywhere and no Python 3.11 to set one up with: SessionStart says what
    to do, /phasegate:run hands the model the same fix, every tool call still runs and
    nothing is gated."""
    work = _project(tmp_path)
    server = scripted_model_server(_script([{"tools": [EDIT]}, {"text": "Edited."}]))
    env = plugin_env(server, PATH="/usr/bin:/bin",
                     PHASEGATE_PLUGIN_BASE_PYTHON="/nonexistent/python3")  # fmt: skip
    del env["PHASEGATE_PLUGIN_PYTHON"]
    session = run_claude(f"/phasegate:run {TASK}", work, env)
    assert session.code == 0 and not session.result["is_error"], session.stderr
    fix = "no python3 3.11 or later was found, so the gate is off in this session"
    (started,) = [
        m
        for m in session.messages
        if m.get("subtype") == "hook_response" and m.get("hook_event") == "SessionStart"
    ]
    assert fix in started["stdout"]
    assert any(fix in text for text in server.user_texts())
    assert "float(expression)" in (work / "app.py").read_text()  # the call ran
    assert not (work / ".phasegate").exists()


def _killed_mid_task(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> tuple[Path, str, str]:
    """A gated task started with ``/phasegate:run`` whose CLI is killed while the model
    answers its second request: the project, the session's HOME and its session id."""
    work = _project(tmp_path)
    first = scripted_model_server(_script([{"tools": [{"Read": {"file_path": "app.py"}}]},
                                           {"hang": True}]))  # fmt: skip
    env = plugin_env(first)
    process = start_claude(f"/phasegate:run {TASK}", work, env)
    try:
        wait_for_requests(first, 2)
    finally:
        process.kill()
    return work, env["HOME"], finish(process).session_id


def test_a_killed_cli_resumed_with_resume_goes_on_from_the_saved_state(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """The CLI dies while the model answers; ``claude --resume`` continues the session and
    its gated task, which the gate then accepts."""
    work, home, session_id = _killed_mid_task(tmp_path, scripted_model_server)
    assert session_state(work, session_id)["status"] == "running"

    second = scripted_model_server(_script([{"tools": [EDIT]}, {"text": f"{MARKER}\n{GOOD_JSON}"}]))
    resumed = run_claude("go on", work, plugin_env(second, home), "--resume", session_id)
    assert resumed.code == 0, resumed.stderr
    assert resumed.session_id == session_id
    state = session_state(work, session_id)
    assert state["status"] == "accepted"
    assert state["report"]["phases"][0]["tools"] == {"Read": 1, "Edit": 1}


LOOK: dict[str, Any] = {
    "name": "look",
    "phases": [{"name": "look", "instructions": "Read app.py.", "require_tools": ["Read"]}],
}


def test_two_gated_sessions_in_one_project_keep_to_their_own_state(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """Two sessions run two gated tasks in one project at once: each is judged on its own
    session only (the example is rejected once then accepted; the other accepted at once)."""
    work = _project(tmp_path)
    look = tmp_path / "look.json"
    look.write_text(json.dumps(LOOK))
    fixing = scripted_model_server(load_script(EXAMPLE / "model.yaml"))
    looking = scripted_model_server(
        _script(
            [{"tools": [{"Read": {"file_path": "app.py"}}]}, {"text": "PHASE 1 COMPLETE: done"}]
        )
    )
    one = start_claude(f"/phasegate:run {TASK}", work, plugin_env(fixing))
    two = start_claude(f"/phasegate:run {look}", work, plugin_env(looking))
    fixed, looked = finish(one), finish(two)
    assert fixed.code == looked.code == 0
    assert fixed.session_id != looked.session_id
    a, b = session_state(work, fixed.session_id), session_state(work, looked.session_id)
    assert (a["task"], a["status"], len(a["checks"])) == ("fix-vulnerability", "accepted", 2)
    assert (b["task"], b["status"], len(b["checks"])) == ("look", "accepted", 1)
    assert a["report"]["phases"][0]["tools"] == {"Read": 1, "Edit": 2}
    assert b["report"]["phases"][0]["tools"] == {"Read": 1}
    events = [
        json.loads(line) for line in (work / ".phasegate/events.jsonl").read_text().splitlines()
    ]
    completed = {e["run_id"]: e["verdict"] for e in events if e["event"] == "run.completed"}
    assert completed == {a["run_id"]: "accepted", b["run_id"]: "accepted"}


def test_a_turn_ended_by_an_api_error_is_not_judged(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """Every request fails: the turn ends on Claude Code's own error, and the gate neither
    counts a check nor sends feedback into a failing API. (2.1.332 does not run the Stop
    hook then; the hook also skips a stop whose last message is Claude Code's API error.)"""
    work = _project(tmp_path)
    server = scripted_model_server(
        _script([{"text": "never sent"}]), fail_all=HttpFault(status=500)
    )
    session = run_claude(f"/phasegate:run {TASK}", work, plugin_env(server))
    assert session.result["is_error"]
    assert {r.status for r in server.main_requests()} == {500}
    assert not any("Stop hook feedback" in r.last_text for r in server.main_requests())
    state = session_state(work, session.session_id)
    assert (state["status"], state["checks"]) == ("running", [])


def test_a_gated_task_survives_compact_and_is_accepted_after_it(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """``/compact`` in the middle of a gated task: the state and the session log keep what
    came before, and the next turns finish the task, judged on all of it."""
    work, home, session_id = _killed_mid_task(tmp_path, scripted_model_server)
    compacting = scripted_model_server(_script([{"text": "Summary: reading app.py for the task."}]))
    compacted = run_claude("/compact", work, plugin_env(compacting, home),
                           "--resume", session_id)  # fmt: skip
    assert compacted.code == 0, compacted.stderr
    assert any(m.get("subtype") == "compact_boundary" for m in compacted.messages)
    assert session_state(work, session_id)["status"] == "running"
    last = scripted_model_server(_script([{"tools": [EDIT]}, {"text": f"{MARKER}\n{GOOD_JSON}"}]))
    resumed = run_claude("go on", work, plugin_env(last, home), "--resume", session_id)
    assert resumed.code == 0, resumed.stderr
    state = session_state(work, session_id)
    assert state["status"] == "accepted"
    assert state["report"]["phases"][0]["tools"] == {"Read": 1, "Edit": 1}
