"""A task's checks in a real Claude Code session with the plugin (print mode, against the
scripted model server): examples/prove-the-fix, whose wrong fix only the phase's check
catches, judged at each stop as ``phasegate run`` judges it; and ``/phasegate:judge``
running the checks on the disk as it is."""

from __future__ import annotations

import json
import os
import re
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

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "prove-the-fix"
TASK = EXAMPLE / "task.yaml"
MODEL = EXAMPLE / "model.yaml"
TESTS = "`python3 -m unittest discover -s tests`"


def _project(tmp_path: Path, name: str) -> Path:
    work = tmp_path / name
    shutil.copytree(EXAMPLE / "project", work)
    return work


def _steady(text: str, project: Path) -> str:
    """``text`` without what differs between two runs of the tests: their time, the
    project's folder."""
    return _untimed(text.replace(str(project), "PROJECT"))


def _untimed(text: str) -> str:
    """``text`` with the time unittest says its tests took left out."""
    return re.sub(r"Ran (\d+) tests? in [0-9.]+s", r"Ran \1 tests in Ns", text)


def _feedback(texts: list[str], project: Path) -> list[str]:
    """The gate's feedback in the texts the model was sent (after Claude Code's prefix)."""
    marker = "The gate checked your work"
    return [_steady(t[t.index(marker) :].strip(), project) for t in texts if marker in t]


def _timeless(record: dict[str, Any], *also: str) -> dict[str, Any]:
    """``record`` without its time, the tests' own time in its detail included (and the
    keys ``also``)."""
    kept = {k: v for k, v in record.items() if k not in ("duration_ms", *also)}
    if isinstance(kept.get("detail"), str):
        kept["detail"] = _untimed(kept["detail"])
    return kept


def _events(work: Path) -> list[dict[str, Any]]:
    lines = (work / ".phasegate/events.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_the_wrong_fix_is_sent_back_with_the_tests_output_and_the_right_one_accepted(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """The lazy model makes add() multiply and claims the fix: every rule holds but the
    phase's check, which the Stop hook runs on the project, so the turn is blocked with the
    tests' own output; the model fixes add() and the next stop accepts. The feedback, the
    check runs, the events and the report are those of ``phasegate run`` with that model."""
    server = scripted_model_server(load_script(MODEL))
    work = _project(tmp_path, "plugin")
    session = run_claude(f"/phasegate:run {TASK}", work, plugin_env(server))
    assert session.code == 0, session.stderr
    state = session_state(work, session.session_id)
    assert state["status"] == "accepted"
    assert "return a + b" in (work / "calc.py").read_text()
    rejected, accepted = state["checks"]
    assert [i["code"] for i in rejected["issues"]] == ["check_failed"]
    assert accepted["accepted"]
    sent = _feedback(server.user_texts(), work)
    assert sent == [_steady(rejected["feedback"].strip(), work)]
    assert f"checks[0] failed: {TESTS} exited with 1" in sent[0]
    assert "AssertionError: 6 != 5" in sent[0]

    report = state["report"]
    (check,) = report["phases"][0]["checks"]
    assert (check["passed"], check["exit_code"], check["run"]) == (True, 0, 2)
    assert report["files_changed"] == ["calc.py"]
    events = _events(work)
    ran = [e for e in events if e["event"] == "check.ran"]
    assert [(e["passed"], e["exit_code"], e["run"], e["via"]) for e in ran] == [
        (False, 1, 1, "plugin"), (True, 0, 2, "plugin")
    ]  # fmt: skip
    assert report["check_ms"] == sum(e["duration_ms"] for e in ran) > 0
    gates = [e for e in events if e["event"] == "phase.gate" and e["phase"] == 1]
    assert [g["issues"] for g in gates] == [["check_failed"], []]
    recording = Path(next(e for e in events if e["event"] == "run.completed")["recording"])
    recorded = json.loads((recording / "report.json").read_text())
    assert recorded["phases"][0]["checks"] == [check]

    run_server = scripted_model_server(load_script(MODEL))
    direct = _project(tmp_path, "direct")
    log = tmp_path / "run.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "phasegate", "run", str(TASK), "-w", str(direct), "--json",
         "--log-file", str(log)],
        env={**os.environ, **run_server.env()}, capture_output=True, text=True, timeout=180,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert _feedback(run_server.user_texts(), direct) == sent
    direct_report = json.loads(done.stdout)
    for key in ("verdict", "attempts", "files_changed", "summary"):
        assert report[key] == direct_report[key]
    (direct_check,) = direct_report["phases"][0]["checks"]
    assert _timeless(direct_check) == _timeless(check)
    direct_events = [json.loads(line) for line in log.read_text().splitlines()]
    direct_ran = [e for e in direct_events if e["event"] == "check.ran"]
    assert [_timeless(e, "via", "timestamp", "run_id") for e in direct_ran] == [
        _timeless(e, "via", "timestamp", "run_id") for e in ran
    ]


def test_judge_runs_the_checks_on_the_disk_as_it_is_now(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """After the task is accepted, ``/phasegate:judge`` in the same session finds it passes;
    once add() is broken again on disk, the same command runs the tests again and says the
    session does not pass, with their output, blocking nothing."""
    server = scripted_model_server(load_script(MODEL))
    work = _project(tmp_path, "plugin")
    env = plugin_env(server)
    session = run_claude(f"/phasegate:run {TASK}", work, env)
    assert session_state(work, session.session_id)["status"] == "accepted"
    after = scripted_model_server(Script.model_validate({"replies": [{"text": "Noted."}] * 2}))
    again = plugin_env(after, env["HOME"])
    passing = run_claude(f"/phasegate:judge {TASK}", work, again, "--resume", session.session_id)
    calc = work / "calc.py"
    calc.write_text(calc.read_text().replace("return a + b", "return a + b + 1"))
    failing = run_claude(f"/phasegate:judge {TASK}", work, again, "--resume", session.session_id)
    assert passing.code == failing.code == 0
    said_pass, said_fail = after.user_texts()[-2:]
    assert "this session so far passes 'prove-the-fix'" in said_pass
    assert "this session so far does not pass 'prove-the-fix' (nothing is blocked)" in said_fail
    assert f"checks[0] failed: {TESTS} exited with 1" in said_fail
    assert "AssertionError: 6 != 5" in said_fail
    assert session_state(work, session.session_id)["status"] == "accepted"
