"""A task's checks in the plugin, hook by hook (the processes the hooks and commands start,
with session logs written as Claude Code writes them): what a check writes is never the
agent's work at a later stop, and a check that would outlast what Claude Code gives a stop
or a command is cut short, said so, and never taken as passed."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from phasegate._plugin import gated, warm
from phasegate._plugin.checks import Bound
from phasegate._plugin.state import SessionFiles
from tests.helpers.processes import gone

SESSION = "checks-0000-0000-0000-000000000001"
PROJECT = Path(__file__).resolve().parents[2] / "examples" / "prove-the-fix" / "project"
START, WRONG, RIGHT = "    return a - b\n", "    return a * b\n", "    return a + b\n"

WRITES_AND_TESTS = (
    "import pathlib, sys; cache = pathlib.Path('.cache'); cache.mkdir(exist_ok=True); "
    "(cache / 'runs').open('a').write('run\\n'); sys.path.insert(0, '.'); import calc; "
    "sys.exit(0 if calc.add(2, 3) == 5 else 1)"
)
"""A check like a test runner's: it leaves a cache behind (new content at each run), and
passes only when add() adds."""

SLEEPS = "import time; time.sleep(60)"


def _task(tmp_path: Path, *checks: dict[str, Any]) -> Path:
    """A one-phase task: change calc.py, claim it, and pass ``checks``."""
    task = tmp_path / "task.json"
    task.write_text(json.dumps({"name": "checked", "phases": [
        {"name": "fix", "instructions": "Fix add() in calc.py.", "require_changes": True,
         "checks": list(checks)}]}))  # fmt: skip
    return task


def _command(script: str, timeout: float = 120) -> dict[str, Any]:
    return {"command": {"argv": [sys.executable, "-c", script], "timeout": timeout}}


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A copy of examples/prove-the-fix's project (add() subtracts)."""
    folder = tmp_path / "work"
    shutil.copytree(PROJECT, folder)
    return folder


def _env(work: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "CLAUDE_CODE_SESSION_ID": SESSION, "CLAUDE_PROJECT_DIR": str(work),
            "PHASEGATE_PLUGIN_WARM": "0", **extra}  # fmt: skip


def _plugin(*args: str, env: dict[str, str], stdin: str = "") -> str:
    done = subprocess.run(
        [sys.executable, "-m", "phasegate._plugin", *args],
        input=stdin, env=env, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    return done.stdout


def _state(work: Path) -> dict[str, Any]:
    return dict(json.loads((work / ".phasegate/plugin" / SESSION / "state.json").read_text()))


class _Session:
    """The session's log as Claude Code writes it: the run's prompt, then each turn's edit of
    calc.py and its claim."""

    def __init__(self, work: Path, log: Path, run_id: str | None) -> None:
        self.work, self.log, self.turns = work, log, 0
        prompt = f"phasegate run {run_id}" if run_id else "Fix add() in calc.py."
        self._write({"type": "user", "message": {"role": "user", "content": prompt}})

    def _write(self, line: dict[str, Any]) -> None:
        with self.log.open("a") as out:
            out.write(json.dumps({"cwd": str(self.work), "uuid": f"u{self.turns}", **line}) + "\n")

    def edits(self, old: str, new: str) -> str:
        """calc.py edited from ``old`` to ``new`` (on disk too), and the phase claimed; the
        claim, as the Stop hook's ``last_assistant_message``."""
        self.turns += 1
        calc = self.work / "calc.py"
        edit = {"file_path": str(calc), "old_string": old, "new_string": new}
        calc.write_text(calc.read_text().replace(old, new))
        use = f"toolu_{self.turns}"
        claim = "PHASE 1 COMPLETE: add() is fixed"
        for role, content in (
            ("assistant", [{"type": "tool_use", "id": use, "name": "Edit", "input": edit}]),
            ("user", [{"type": "tool_result", "tool_use_id": use, "content": "ok"}]),
            ("assistant", [{"type": "text", "text": claim}]),
        ):
            extra = {"id": f"msg_{self.turns}_{role}", "model": "m", "type": "message"}
            message = {"role": role, "content": content, **(extra if role == "assistant" else {})}
            self._write({"type": role, "message": message})
        return claim

    def calls(self, use: str, name: str, arguments: dict[str, Any]) -> None:
        """A tool call (its result not in yet), as Claude Code logs it before it answers."""
        self.turns += 1
        content = [{"type": "tool_use", "id": use, "name": name, "input": arguments}]
        message = {"role": "assistant", "content": content, "id": f"msg_{self.turns}_call",
                   "model": "m", "type": "message"}  # fmt: skip
        self._write({"type": "assistant", "message": message})

    def stop(self, claim: str) -> dict[str, Any]:
        """The Stop hook's input after ``claim``."""
        return {"session_id": SESSION, "cwd": str(self.work), "transcript_path": str(self.log),
                "hook_event_name": "Stop", "stop_hook_active": False,
                "last_assistant_message": claim}  # fmt: skip


def _stop(session: _Session, claim: str, env: dict[str, str]) -> dict[str, Any]:
    """The Stop hook's answer after ``claim``, as the hook process gives it."""
    return dict(json.loads(_plugin("hook", "stop", env=env, stdin=json.dumps(session.stop(claim)))))


def _started(
    work: Path, tmp_path: Path, task: Path, env: dict[str, str], log: Path | None = None
) -> _Session:
    _plugin("run", str(task), env=env)
    return _Session(work, log or tmp_path / "session.jsonl", _state(work)["run_id"])


def test_what_a_check_wrote_at_one_stop_is_never_the_agents_work_at_a_later_stop(
    work: Path, tmp_path: Path
) -> None:
    """The first stop's check fails and leaves its cache; the next stop, a new process,
    takes up what the check wrote from the session's state: the cache (changed again by the
    second run) is not among the files the task changed, which are calc.py alone."""
    env = _env(work)
    session = _started(work, tmp_path, _task(tmp_path, _command(WRITES_AND_TESTS)), env)
    first = _stop(session, session.edits(START, WRONG), env)
    assert first["decision"] == "block" and "checks[0] failed" in first["reason"]
    assert list(_state(work)["by_checks"]) == [".cache/runs"]
    second = _stop(session, session.edits(WRONG, RIGHT), env)
    assert "accepted" in second["systemMessage"]
    assert (work / ".cache/runs").read_text() == "run\nrun\n"
    report = _state(work)["report"]
    assert report["files_changed"] == ["calc.py"]
    assert report["phases"][0]["files_changed"] == ["calc.py"]


def test_a_stopped_run_reports_the_checks_it_did_not_run_on_the_disk_as_it_is(
    work: Path, tmp_path: Path
) -> None:
    """/phasegate:stop runs no check: the stopped run's report shows the phase's check as not
    run on the disk it ended with (never passed), and counts the time of the run it had."""
    env = _env(work)
    session = _started(work, tmp_path, _task(tmp_path, _command(WRITES_AND_TESTS)), env)
    assert _stop(session, session.edits(START, WRONG), env)["decision"] == "block"
    assert "is stopped" in _plugin("stop", env=env)
    state = _state(work)
    report = state["report"]
    assert [i["code"] for i in report["phases"][0]["issues"]] == ["check_not_run"]
    (ran,) = state["check_runs"]
    assert not ran["passed"] and report["check_ms"] == ran["duration_ms"]


def test_a_stop_claude_code_ends_ends_the_check_command_it_was_running(
    work: Path, tmp_path: Path
) -> None:
    """Claude Code ends a hook with SIGTERM (its timeout, or the user interrupting): the
    check's command, in a session of its own, ends with the hook instead of running on, and
    nothing is recorded for that stop (the next one judges again)."""
    env = _env(work)
    script = "import os, time; open('check.pid', 'w').write(str(os.getpid())); time.sleep(60)"
    session = _started(work, tmp_path, _task(tmp_path, _command(script, timeout=300)), env)
    hook = subprocess.Popen(
        [sys.executable, "-m", "phasegate._plugin", "hook", "stop"],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env, text=True,
    )  # fmt: skip
    assert hook.stdin is not None
    hook.stdin.write(json.dumps(session.stop(session.edits(START, RIGHT))))
    hook.stdin.close()
    written = work / "check.pid"
    deadline = time.monotonic() + 60
    while not written.is_file() or not written.read_text():
        assert time.monotonic() < deadline, "the check's command did not start"
        time.sleep(0.05)
    hook.send_signal(signal.SIGTERM)
    assert hook.wait(timeout=30) == 0
    assert gone(int(written.read_text()), within=10)
    assert _state(work)["gate"]["attempts"] == 0


@pytest.fixture
def in_process(work: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The environment of a hook run in this process (the gate called directly)."""
    env = _env(work)
    for name in ("CLAUDE_CODE_SESSION_ID", "CLAUDE_PROJECT_DIR"):
        monkeypatch.setenv(name, env[name])
    return env


def test_a_check_still_running_when_a_stops_time_runs_out_is_cut_short_and_not_passed(
    work: Path, tmp_path: Path, in_process: dict[str, str]
) -> None:
    """A stop whose hook started nearly a stop's bound ago: the first command is stopped
    when the bound is reached, the second is not started, each fails saying why (the
    model is told, the events say not passed), and the stop ends well within the hook's time."""
    task = _task(tmp_path, _command(SLEEPS, timeout=300), _command("pass"))
    session = _started(work, tmp_path, task, in_process)
    hook = session.stop(session.edits(START, RIGHT))
    began = time.monotonic()
    answer = gated.on_stop(hook, started=time.time() - Bound.stop().seconds + 2)
    assert time.monotonic() - began < 20
    assert answer is not None and answer["decision"] == "block"
    issues = _state(work)["last_issues"]
    assert [i["code"] for i in issues] == ["check_failed", "check_failed"]
    cut, unstarted = (i["message"] for i in issues)
    assert "was cut short after 2 s, before its own timeout (300 s)" in cut
    assert "was not run: the plugin gives a stop's checks 1140 s in all" in unstarted
    assert "Claude Code ends its Stop hook at 1200 s" in answer["reason"]
    events = [
        json.loads(line) for line in (work / ".phasegate/events.jsonl").read_text().splitlines()
    ]
    ran = [e for e in events if e["event"] == "check.ran"]
    assert [(e["check"], e["passed"], e["exit_code"]) for e in ran] == [
        (0, False, None),
        (1, False, None),
    ]


def test_a_completion_tool_call_runs_the_phases_checks_and_answers_with_their_output(
    work: Path, tmp_path: Path, in_process: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """phase_complete after the wrong fix: the plugin's MCP server judges it with the check
    run on the project, answers validation_failed with the command's failure, and logs the
    run before the gate's check, as ``phasegate run`` does."""
    config = tmp_path / "config"  # where the server finds the session's log, as Claude Code's
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    log = config / "projects" / "work" / f"{SESSION}.jsonl"
    log.parent.mkdir(parents=True)
    task = _task(tmp_path, _command(WRITES_AND_TESTS))
    session = _started(work, tmp_path, task, in_process, log)
    session.edits(START, WRONG)
    session.calls("toolu_done", "mcp__plugin_phasegate_phasegate__phase_complete", {"phase": 1})
    answer = gated.answer_completion_tool(
        SESSION, "mcp__phasegate__phase_complete", {"phase": 1}, "toolu_done"
    )
    assert not answer.ok
    assert "checks[0] failed" in answer.text and "exited with 1" in answer.text
    state = _state(work)
    assert [r["passed"] for r in state["check_runs"]] == [False]
    assert list(state["by_checks"]) == [".cache/runs"]
    events = [
        json.loads(line) for line in (work / ".phasegate/events.jsonl").read_text().splitlines()
    ]
    told = [
        (e["event"], e.get("trigger")) for e in events if e["event"] in ("check.ran", "phase.gate")
    ]
    assert told == [("check.ran", None), ("phase.gate", "tool")]


def test_the_warm_gate_bounds_the_checks_from_the_hooks_start_not_its_own(
    work: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hook hands its start to the warm gate with the request: a stop asked near the
    end of its hook's time has its check cut short there too."""
    monkeypatch.setenv(warm.SWITCH, "1")  # this process asks as the hook would
    env = _env(work, PHASEGATE_PLUGIN_WARM="1")
    session = _started(work, tmp_path, _task(tmp_path, _command(SLEEPS, timeout=300)), env)
    files = SessionFiles(work.resolve(), SESSION)
    try:
        deadline = time.monotonic() + 60
        while files.read("warm") is None:
            assert time.monotonic() < deadline, "the warm gate did not start"
            time.sleep(0.05)
        hook = session.stop(session.edits(START, RIGHT))
        answer = warm.ask(hook, files, dict(env), time.time() - Bound.stop().seconds + 2)
        assert isinstance(answer, dict) and answer["decision"] == "block"
        assert "was cut short after 2 s" in answer["reason"]
    finally:
        with contextlib.suppress(OSError, TypeError, KeyError):
            os.kill(int((files.read("warm") or {})["pid"]), signal.SIGTERM)


def _git(work: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(work), *args], check=True, capture_output=True)


@pytest.mark.parametrize("gated_task", [True, False], ids=["gated", "against-head"])
def test_judge_cuts_short_a_check_that_would_outlast_claude_codes_wait_for_a_command(
    work: Path, tmp_path: Path, gated_task: bool
) -> None:
    """``/phasegate:judge`` runs the checks (against the gated task's start, or git's HEAD
    with nothing gated) within what Claude Code waits for a command's output
    (``BASH_DEFAULT_TIMEOUT_MS`` less a margin: 2 s here), and says a check cut short."""
    _git(work, "init", "-q")
    _git(work, "add", ".")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    config = tmp_path / "config"
    env = _env(work, BASH_DEFAULT_TIMEOUT_MS="17000", CLAUDE_CONFIG_DIR=str(config))
    task = _task(tmp_path, _command(SLEEPS, timeout=300))
    log = config / "projects" / "work" / f"{SESSION}.jsonl"
    log.parent.mkdir(parents=True)
    if gated_task:
        _plugin("run", str(task), env=env)
    session = _Session(work, log, _state(work)["run_id"] if gated_task else None)
    session.edits(START, RIGHT)
    began = time.monotonic()
    said = _plugin("judge", str(task), env=env)
    assert time.monotonic() - began < 15
    assert "this session so far does not pass 'checked' (nothing is blocked)" in said
    assert "was cut short after 2 s, before its own timeout (300 s)" in said
    assert "/phasegate:judge gives the checks 2 s in all" in said
    assert "BASH_DEFAULT_TIMEOUT_MS" in said


@pytest.mark.parametrize(("timeout", "told"), [(120, False), (1200, True)])
def test_run_tells_the_user_when_the_checks_may_outlast_what_a_stop_gives_them(
    work: Path, tmp_path: Path, timeout: int, told: bool
) -> None:
    """A task whose command checks' timeouts add up past a stop's bound is still started,
    with one line telling the user they may be cut short; a task within it gets none."""
    task = _task(tmp_path, _command("pass", timeout=timeout))
    said = _plugin("run", str(task), env=_env(work))
    assert "phasegate run " in said
    note = "this task's command checks may take up to 1200 s at a stop"
    assert (note in said) is told
