"""``/phasegate:pipeline`` in a real Claude Code session (print mode, the plugin loaded with
``--plugin-dir``) against the scripted model server: the stages, retries and ``back_to``
revisions of ``phasegate pipeline run``, carried from one hook process to the next."""

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

pytestmark = pytest.mark.cli

PAGENT = Path(__file__).resolve().parents[2] / "examples" / "pagent"

REVISING: dict[str, Any] = {
    "name": "revise",
    "stages": [
        {"name": "architect", "prompt": "Write spec.md.",
         "exit_when": [{"file_exists": "spec.md"}]},
        {"name": "implement", "prompt": "Implement spec.md.",
         "exit_when": [{"command": ["python3", "-c",
                                    "import sys; sys.exit('v2' not in open('spec.md').read())"]}],
         "on_fail": {"retry": 1, "back_to": "architect"}},
        {"name": "report", "prompt": "Say you are done.", "exit_when": [{"said": "DONE"}]},
    ],
}  # fmt: skip
"""implement cannot pass on spec v1: one retry with feedback, then back to architect."""

REVISING_MODEL: dict[str, Any] = {
    "replies": [
        {"contains": "Stage 1 of 3: architect",
         "tools": [{"Write": {"file_path": "spec.md", "content": "v1\n"}}]},
        {"when": "tool_result", "text": "Spec v1."},
        {"contains": "Stage 2 of 3: implement", "text": "Nothing to change."},
        {"when": "user", "contains": "exit_condition_failed", "text": "Still nothing."},
        {"contains": "goes back to stage architect",
         "tools": [{"Write": {"file_path": "spec.md", "content": "v2\n"}}]},
        {"when": "tool_result", "text": "Spec v2."},
        {"contains": "Stage 2 of 3: implement", "text": "Implemented."},
        {"contains": "Stage 3 of 3: report", "text": "Done.\n\n<promise>DONE</promise>"},
    ]
}  # fmt: skip


def _shape(report: dict[str, Any]) -> dict[str, Any]:
    """What must match: verdict, each stage's status, visits, attempts and check outcomes,
    the revisions with their failures."""
    return {
        "verdict": report["verdict"],
        "stages": [
            {k: s[k] for k in ("index", "name", "status", "visits", "attempts", "checks",
                               "files_changed")}
            for s in report["stages"]
        ],
        "revisions": report["revisions"],
    }  # fmt: skip


def _events(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def _direct(
    tmp_path: Path, factory: ScriptedServerFactory, script: Script, pipeline: Path, work: Path
) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    """``phasegate pipeline run`` of the same pipeline and model: its report, its events and
    the feedback of each check (from its recording)."""
    server = factory(script)
    log, record = tmp_path / "direct.jsonl", tmp_path / "direct-record"
    done = subprocess.run(
        [sys.executable, "-m", "phasegate", "pipeline", "run", str(pipeline), "-w", str(work),
         "--json", "--log-file", str(log), "--record", str(record)],
        env={**os.environ, **server.env()}, capture_output=True, text=True, timeout=300,
        check=False,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    checks = [json.loads(line) for line in (record / "checks.jsonl").read_text().splitlines()]
    return json.loads(done.stdout), _events(log), [c["feedback"] for c in checks]


def _names(events: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """Each event's name with its stage (what both runs must log, in order)."""
    return [(e["event"], e.get("stage")) for e in events]


def test_a_pipeline_with_back_to_is_judged_as_phasegate_pipeline_run_judges_it(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """A retry with feedback, a revision back to architect, then every stage accepted, all in
    the user's session: the report (stages, visits, attempts, check outcomes, revisions), the
    events in order and the text of every check's feedback equal ``phasegate pipeline run``'s
    for the same model; the log says ``via: plugin`` and its recording renders."""
    pipeline = tmp_path / "revise.json"
    pipeline.write_text(json.dumps(REVISING))
    script = Script.model_validate(REVISING_MODEL)
    server = scripted_model_server(script)
    work = tmp_path / "plugin"
    work.mkdir()
    session = run_claude(f"/phasegate:pipeline {pipeline}", work, plugin_env(server))
    assert session.code == 0, session.stderr
    state = session_state(work, session.session_id)
    assert state["status"] == "accepted", state.get("last_issues")

    direct = tmp_path / "direct"
    direct.mkdir()
    report, events, feedback = _direct(tmp_path, scripted_model_server, script, pipeline, direct)
    assert report["verdict"] == "accepted"
    assert _shape(state["report"]) == _shape(report)
    assert [s["visits"] for s in report["stages"]] == [2, 2, 1]
    plugin_feedback = [c["feedback"] for c in state["checks"]]
    assert plugin_feedback == feedback
    assert sum(1 for text in feedback if text and "exit_condition_failed" in text) == 2
    sent = "\n".join(server.user_texts())
    assert all(text in sent for text in plugin_feedback if text)

    log = _events(work / ".phasegate/events.jsonl")
    assert {e["via"] for e in log} == {"plugin"}
    assert _names(log) == _names(events)
    (closing,) = [e for e in log if e["event"] == "pipeline.completed"]
    page = Path(closing["recording"])
    shown = subprocess.run(
        [sys.executable, "-m", "phasegate", "view", str(page)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert (page / "index.html").is_file()
    recorded = [json.loads(line) for line in (page / "checks.jsonl").read_text().splitlines()]
    assert [c["accepted"] for c in recorded] == [True, False, False, True, True, True]


def test_pagents_pipeline_file_runs_through_the_plugin_as_phasegate_pipeline_run_runs_it(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """examples/pagent's ``.claude/pagent-pipeline.json`` with its model: the slips pagent's
    hook misses (too few files, a promise only written to a file) are caught in the session,
    and the report equals ``phasegate pipeline run``'s."""
    script = load_script(PAGENT / "model.yaml")
    work = tmp_path / "plugin"
    shutil.copytree(PAGENT / "project", work)
    server = scripted_model_server(script)
    session = run_claude(
        "/phasegate:pipeline .claude/pagent-pipeline.json", work, plugin_env(server)
    )
    assert session.code == 0, session.stderr
    state = session_state(work, session.session_id)
    direct = tmp_path / "direct"
    shutil.copytree(PAGENT / "project", direct)
    report, _, feedback = _direct(
        tmp_path, scripted_model_server, script, direct / ".claude/pagent-pipeline.json", direct
    )
    assert state["status"] == report["verdict"] == "accepted"
    assert _shape(state["report"]) == _shape(report)
    assert [c["feedback"] for c in state["checks"]] == feedback
    assert any(not c["accepted"] for c in state["checks"])
