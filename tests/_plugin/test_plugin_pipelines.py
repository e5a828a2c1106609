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
    for command, says in (
        (["view", str(page)], "index"),
        (["report", str(work / ".phasegate/events.jsonl")], "1 run from"),
    ):
        shown = subprocess.run(
            [sys.executable, "-m", "phasegate", *command],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert shown.returncode == 0 and says in shown.stdout, shown.stderr
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


STAGES = 12
MANY: dict[str, Any] = {
    "name": "many",
    "stages": [
        {"name": f"s{n}", "prompt": f"Say step {n}.", "exit_when": [{"said": f"STEP {n}"}]}
        for n in range(1, STAGES + 1)
    ],
}
"""Twelve stages, each passing once the model says its step: eleven hand-overs by a block."""


def _step(n: int) -> dict[str, Any]:
    return {"contains": f"Stage {n} of {STAGES}:", "text": f"Done.\n\n<promise>STEP {n}</promise>"}


def test_twelve_stages_complete_over_two_turns_with_every_stage_gated(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """The first turn hands over seven stages by Stop blocks, then the gate ends the turn
    itself before Claude Code's cap, naming the stage not checked yet and what to type; the
    user's 'go on' (``claude -p --resume``) starts a turn whose first stop checks that stage,
    and the rest follow: twelve checks, each accepted once, none overridden by the CLI."""
    pipeline = tmp_path / "many.json"
    pipeline.write_text(json.dumps(MANY))
    replies = [_step(n) for n in range(1, 9)]
    replies += [{"contains": "go on", "text": "Going on from stage 8."}]
    replies += [_step(n) for n in range(9, STAGES + 1)]
    server = scripted_model_server(Script.model_validate({"replies": replies}))
    work = tmp_path / "work"
    work.mkdir()
    env = plugin_env(server)
    first = run_claude(f"/phasegate:pipeline {pipeline}", work, env)
    assert first.code == 0, first.stderr
    state = session_state(work, first.session_id)
    assert state["status"] == "running"
    assert state["pipeline_state"]["stage"] == 7
    assert [s["status"] for s in state["pipeline_state"]["stages"]][:8] == ["accepted"] * 7 + [
        "running"
    ]
    ended = [m["content"] for m in first.messages if m.get("subtype") == "informational"][-1]
    assert "stage 8 of 12 (s8) is not checked yet" in ended and "'go on'" in ended
    assert not any("overriding and ending turn" in text for text in first.texts())

    again = run_claude("go on", work, plugin_env(server, env["HOME"]), "--resume", first.session_id)
    assert again.code == 0, again.stderr
    state = session_state(work, first.session_id)
    assert state["status"] == "accepted"
    assert [(s["status"], s["attempts"]) for s in state["report"]["stages"]] == [
        ("accepted", 1)
    ] * STAGES
    assert [c["accepted"] for c in state["checks"]] == [True] * STAGES
    log = _events(work / ".phasegate/events.jsonl")
    checked = [(e["stage"], e["passed"]) for e in log if e["event"] == "stage.checked"]
    assert checked == [(n, True) for n in range(1, STAGES + 1)]
    assert [e["verdict"] for e in log if e["event"] == "pipeline.completed"] == ["accepted"]


def test_a_loop_ends_when_its_until_checks_hold(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """``--until`` a line count and a real command: the first iteration leaves one line and
    gets the checks' feedback, the second makes both hold and the loop is accepted after two
    iterations, its events counting them."""
    model = {
        "replies": [
            {"contains": "Write notes.md",
             "tools": [{"Write": {"file_path": "notes.md", "content": "one\n"}}]},
            {"when": "tool_result", "text": "Wrote one line."},
            {"when": "user", "contains": "exit_condition_failed",
             "tools": [{"Write": {"file_path": "notes.md", "content": "one\ntwo\n"}}]},
            {"when": "tool_result", "text": "Now two."},
        ]
    }  # fmt: skip
    server = scripted_model_server(Script.model_validate(model))
    work = tmp_path / "work"
    work.mkdir()
    command = (
        "/phasegate:loop Write notes.md with two lines --until 'min_lines: {path: notes.md, n: 2}'"
        " --until 'command: grep -q two notes.md' --max-iterations 3"
    )
    session = run_claude(command, work, plugin_env(server))
    assert session.code == 0, session.stderr
    state = session_state(work, session.session_id)
    assert state["kind"] == "loop" and state["status"] == "accepted"
    (stage,) = state["report"]["stages"]
    assert stage["attempts"] == 2
    assert [c["kind"] for c in stage["checks"]] == ["min_lines", "command"]
    log = _events(work / ".phasegate/events.jsonl")
    (started,) = [e for e in log if e["event"] == "pipeline.started"]
    assert started["loop"]["max_iterations"] == 3
    (completed,) = [e for e in log if e["event"] == "pipeline.completed"]
    assert completed["iterations"] == 2 and completed["verdict"] == "accepted"


def test_a_loop_that_runs_out_of_iterations_is_rejected(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """A model that only talks: two iterations, each checked and fed back, then rejected;
    the closing message names the verdict and the recording."""
    model = {"replies": [{"text": "I think it works."}, {"text": "Surely it works now."}]}
    server = scripted_model_server(Script.model_validate(model))
    work = tmp_path / "work"
    work.mkdir()
    session = run_claude(
        "/phasegate:loop Make the tests pass --until 'command: python3 -c \"raise SystemExit(1)\"'"
        " --max-iterations 2",
        work,
        plugin_env(server),
    )
    assert session.code == 0, session.stderr
    state = session_state(work, session.session_id)
    assert state["status"] == "rejected"
    assert [c["accepted"] for c in state["checks"]] == [False, False]
    closing = [m["content"] for m in session.messages if m.get("subtype") == "informational"][-1]
    assert "loop 'loop' rejected" in closing and "phasegate view" in closing


def test_a_stage_with_a_phased_task_is_gated_by_its_phases_across_stops(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """The bundled example's task as a stage: the lazy model's claim is refused with the
    task gate's feedback (its counters carried to the next stop's process), the edit is
    then accepted, as ``phasegate pipeline run`` judges the same model."""
    example = Path(__file__).resolve().parents[2] / "examples" / "fix-vulnerability"
    shutil.copy(example / "task.yaml", tmp_path / "task.yaml")  # beside the pipeline file
    pipeline = tmp_path / "fix.json"
    pipeline.write_text(
        json.dumps({"name": "fix", "stages": [{"name": "fix", "task": "task.yaml"}]})
    )
    script = load_script(example / "model.yaml")
    work = tmp_path / "plugin"
    shutil.copytree(example / "project", work)
    server = scripted_model_server(script)
    session = run_claude(f"/phasegate:pipeline {pipeline}", work, plugin_env(server))
    assert session.code == 0, session.stderr
    state = session_state(work, session.session_id)
    direct = tmp_path / "direct"
    shutil.copytree(example / "project", direct)
    report, _, feedback = _direct(tmp_path, scripted_model_server, script, pipeline, direct)
    assert state["status"] == report["verdict"] == "accepted"
    assert _shape(state["report"]) == _shape(report)
    assert [c["feedback"] for c in state["checks"]] == feedback
    assert [c["accepted"] for c in state["checks"]] == [False, True]
    assert "tool_not_used" in {i["code"] for i in state["checks"][0]["issues"]}
