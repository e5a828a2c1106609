"""``/phasegate:run`` in a real Claude Code session (print mode, the plugin loaded with
``--plugin-dir``) against the scripted model server: the same gate as ``phasegate run``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from phasegate.testing import Script, load_script
from phasegate.testing.pytest_plugin import ScriptedServerFactory
from tests.helpers.plugin import plugin_env, run_claude, session_state
from tests.helpers.scenarios import EXAMPLE

pytestmark = pytest.mark.cli

MODEL = EXAMPLE / "model.yaml"
TASK = EXAMPLE / "task.yaml"


def _project(tmp_path: Path, name: str) -> Path:
    work = tmp_path / name
    shutil.copytree(EXAMPLE / "project", work)
    return work


def _shape(report: dict[str, Any]) -> dict[str, Any]:
    """What must match between the two runs: verdict, per-phase status, attempts, tools,
    tool errors, files, issue codes; the files changed and claimed, the summary."""
    return {
        "verdict": report["verdict"],
        "attempts": report["attempts"],
        "files_changed": report["files_changed"],
        "files_claimed": report["files_claimed"],
        "summary": report["summary"],
        "phases": [
            {k: p[k] for k in ("index", "name", "status", "attempts", "marker_seen",
                               "completed_by", "tools", "tool_errors", "files_changed")}
            | {"issues": [i["code"] for i in p["issues"]]}
            for p in report["phases"]
        ],
    }  # fmt: skip


def _feedback(texts: list[str]) -> list[str]:
    """The gate's feedback in the texts the model was sent (after Claude Code's own prefix)."""
    marker = "The gate checked your work"
    return [text[text.index(marker) :].strip() for text in texts if marker in text]


def test_the_example_is_rejected_then_accepted_in_one_session_as_phasegate_run_judges_it(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """The lazy model claims the fix without editing: the Stop hook blocks with the gate's
    feedback, the model edits, and the gate accepts, all in one session; the report, the
    feedback sent and the issue codes are those of ``phasegate run`` for the same model."""
    plugin_server = scripted_model_server(load_script(MODEL))
    work = _project(tmp_path, "plugin")
    session = run_claude(f"/phasegate:run {TASK}", work, plugin_env(plugin_server))
    assert session.code == 0, session.stderr
    state = session_state(work, session.session_id)
    assert state["status"] == "accepted"
    assert [c["accepted"] for c in state["checks"]] == [False, True]

    run_server = scripted_model_server(load_script(MODEL))
    direct = _project(tmp_path, "direct")
    done = subprocess.run(
        [sys.executable, "-m", "phasegate", "run", str(TASK), "-w", str(direct), "--json"],
        env={**os.environ, **run_server.env()}, capture_output=True, text=True, timeout=180,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert _shape(state["report"]) == _shape(json.loads(done.stdout))
    plugin_feedback = _feedback(plugin_server.user_texts())
    assert plugin_feedback == _feedback(run_server.user_texts())
    assert plugin_feedback == [state["checks"][0]["feedback"].strip()]
    assert (work / "app.py").read_text() == (direct / "app.py").read_text()

    events = [
        json.loads(line) for line in (work / ".phasegate/events.jsonl").read_text().splitlines()
    ]
    assert {e["via"] for e in events} == {"plugin"}
    assert events[0]["event"] == "run.started"
    (closing,) = [e for e in events if e["event"] == "run.completed"]
    assert closing["verdict"] == "accepted"
    page = Path(closing["recording"])
    assert (page / "index.html").is_file() and (page / "report.json").is_file()
    log = work / ".phasegate/events.jsonl"
    for command, says in ((["report", str(log)], "1 run from"), (["view", str(page)], "index")):
        shown = subprocess.run(
            [sys.executable, "-m", "phasegate", *command],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert shown.returncode == 0 and says in shown.stdout, shown.stderr
    blocked_message, closing_message = [
        m["content"] for m in session.messages if m.get("subtype") == "informational"
    ]
    assert "'fix-vulnerability' not accepted yet (tool_not_used, no_changes, " in blocked_message
    assert "(2 check(s) left)" in blocked_message
    assert f"task 'fix-vulnerability' accepted. Its page: phasegate view {page}" in closing_message


def test_a_prompt_without_a_gated_task_is_never_blocked(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """A session that never ran /phasegate:run ends its turn at once, whatever
    ``.phasegate/`` holds for other sessions."""
    server = scripted_model_server(load_script(MODEL))
    work = _project(tmp_path, "plain")
    first = run_claude(f"/phasegate:run {TASK}", work, plugin_env(server))
    other_server = scripted_model_server(load_script(MODEL))
    second = run_claude("look at app.py", work, plugin_env(other_server))
    assert second.code == 0
    assert second.session_id != first.session_id
    assert not _feedback(other_server.user_texts())
    assert not (work / ".phasegate/plugin" / second.session_id).exists()
    assert session_state(work, first.session_id)["status"] == "accepted"


POLICY_TASK: dict[str, Any] = {
    "name": "investigate-then-fix",
    "protect": ["tests/**"],
    "phases": [
        {"name": "investigate", "instructions": "Read app.py and find the bug.",
         "require_tools": ["Read"], "allow_tools": ["Read", "Grep", "Glob"]},
        {"name": "fix", "instructions": "Fix it.", "require_tools": ["Edit"],
         "require_changes": True},
        {"name": "summary", "instructions": "Report.", "output_schema": {"type": "object"}},
    ],
}  # fmt: skip
"""Only Read, Grep and Glob while investigating, and nothing under tests/ ever."""

POLICY_MODEL: dict[str, Any] = {
    "replies": [
        {"tools": [{"Edit": {"file_path": "app.py", "old_string": "eval(expression)",
                             "new_string": "float(expression)"}},
                   {"Read": {"file_path": "app.py"}}]},
        {"text": "PHASE 1 COMPLETE: done",
         "tools": [{"Write": {"file_path": "tests/test_app.py", "content": "assert True\n"}},
                   {"Edit": {"file_path": "app.py", "old_string": "eval(expression)",
                             "new_string": "float(expression)"}}]},
        {"text": 'PHASE 2 COMPLETE: done\n\n```json\n{"fixed": true}\n```'},
    ]
}  # fmt: skip
"""An Edit while investigating (refused), a Write under tests/ (refused), then the fix."""


def _refusals(log: Path) -> list[tuple[str, str]]:
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    return [(e["tool"], e["reason"]) for e in lines if e["event"] == "tool.refused"]


def test_allow_tools_and_protect_refuse_calls_with_phasegate_runs_reasons(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """PreToolUse refuses the Edit the investigating phase does not allow and the Write to a
    protected path, before they run, with the reasons ``phasegate run`` gives; the model
    sees each reason as the call's error, and the task is accepted once done within policy."""
    task_file = tmp_path / "task.json"
    task_file.write_text(json.dumps(POLICY_TASK))
    server = scripted_model_server(Script.model_validate(POLICY_MODEL))
    work = _project(tmp_path, "plugin")
    session = run_claude(f"/phasegate:run {task_file}", work, plugin_env(server))
    assert session.code == 0, session.stderr
    assert session_state(work, session.session_id)["status"] == "accepted"
    assert not (work / "tests").exists()
    plugin_refusals = _refusals(work / ".phasegate/events.jsonl")
    assert [tool for tool, _ in plugin_refusals] == ["Edit", "Write"]
    errors = [
        json.dumps(block["content"])
        for m in session.messages if m["type"] == "user"
        for block in m["message"]["content"]
        if isinstance(block, dict) and block.get("is_error")
    ]  # fmt: skip
    for _, reason in plugin_refusals:
        assert any(json.dumps(reason)[1:-1][:60] in error for error in errors)

    run_server = scripted_model_server(Script.model_validate(POLICY_MODEL))
    direct = _project(tmp_path, "direct")
    log = tmp_path / "run.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "phasegate", "run", str(task_file), "-w", str(direct),
         "--log-file", str(log)],
        env={**os.environ, **run_server.env()}, capture_output=True, text=True, timeout=180,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert [(t, r.replace(str(work), "WORK")) for t, r in plugin_refusals] == [
        (t, r.replace(str(direct), "WORK")) for t, r in _refusals(log)
    ]


def test_status_and_judge_answer_in_the_same_session_after_the_task_ends(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """``--resume`` the session of an accepted task: /phasegate:status reports it accepted
    with its recording, /phasegate:judge finds the session passes the task, and neither
    blocks (the model's reply ends each turn)."""
    server = scripted_model_server(load_script(MODEL))
    work = _project(tmp_path, "plugin")
    env = plugin_env(server)
    session = run_claude(f"/phasegate:run {TASK}", work, env)
    run_id = session_state(work, session.session_id)["run_id"]
    after = scripted_model_server(Script.model_validate({"replies": [{"text": "Noted."}] * 2}))
    again = plugin_env(after, env["HOME"])
    status = run_claude("/phasegate:status", work, again, "--resume", session.session_id)
    judged = run_claude(f"/phasegate:judge {TASK}", work, again, "--resume", session.session_id)
    assert status.code == judged.code == 0
    texts = after.user_texts()
    assert any("'fix-vulnerability'" in t and "is accepted" in t and run_id in t for t in texts)
    assert any("this session so far passes 'fix-vulnerability'" in t for t in texts)
    assert not _feedback(texts)
