"""The warm gate (phasegate._plugin.warm): a Stop it answers equals one the hook answers
itself, a dead one or another session's request falls back to the hook's own work, and no
process is left once the gated run ends."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from phasegate._plugin import warm
from phasegate._plugin.state import SessionFiles
from tests.helpers.imports import imports_of
from tests.helpers.scenarios import EXAMPLE, MARKER

SESSION = "warm-0000-0000-0000-000000000001"
VOLATILE = {"ts", "run_id", "started", "duration_ms", "timestamp", "recording"}


def _env(work: Path, *, warm_gate: bool) -> dict[str, str]:
    return {**os.environ, "CLAUDE_CODE_SESSION_ID": SESSION, "CLAUDE_PROJECT_DIR": str(work),
            "PHASEGATE_PLUGIN_WARM": "1" if warm_gate else "0"}  # fmt: skip


def _plugin(*args: str, env: dict[str, str], stdin: str = "") -> str:
    done = subprocess.run(
        [sys.executable, "-m", "phasegate._plugin", *args],
        input=stdin, env=env, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    return done.stdout


def _until(condition: Any, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"still waiting for {what}"
        time.sleep(0.05)


def _is_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.fixture(autouse=True)
def _no_warm_gate_left(tmp_path: Path) -> Iterator[None]:
    """Whatever a test leaves (a failed assertion), its warm gates end with it."""
    yield
    for door in tmp_path.glob(f"*/.phasegate/plugin/{SESSION}/warm.json"):
        with contextlib.suppress(OSError, ValueError, KeyError):
            os.kill(int(json.loads(door.read_text())["pid"]), signal.SIGTERM)


def _started(tmp_path: Path, name: str, *, warm_gate: bool) -> tuple[Path, dict[str, str], str]:
    """The example task started in a copy of its project; the Stop hook's input (the model
    claims the phase without doing it)."""
    work = tmp_path / name
    shutil.copytree(EXAMPLE / "project", work)
    env = _env(work, warm_gate=warm_gate)
    _plugin("run", str(EXAMPLE / "task.yaml"), env=env)
    files = SessionFiles(work.resolve(), SESSION)
    if warm_gate:
        _until(lambda: files.read("warm") is not None, "the warm gate to listen")
    log = tmp_path / f"{name}.jsonl"
    claim = {"role": "assistant", "id": "m1", "model": "m", "type": "message",
             "content": [{"type": "text", "text": MARKER}]}  # fmt: skip
    log.write_text(json.dumps({"type": "assistant", "message": claim, "uuid": "1"}) + "\n")
    stop = {"session_id": SESSION, "cwd": str(work), "transcript_path": str(log),
            "hook_event_name": "Stop", "stop_hook_active": False}  # fmt: skip
    return work, env, json.dumps(stop)


def _steady(value: Any) -> Any:
    """``value`` without what differs between two runs (ids, times, folder names)."""
    if isinstance(value, dict):
        return {k: _steady(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_steady(v) for v in value]
    return value


def _record(work: Path) -> dict[str, Any]:
    """The session's state, policy and events, its project's folder named alike."""
    folder = work / ".phasegate/plugin" / SESSION

    def read(path: Path) -> str:
        return path.read_text().replace(str(work.resolve()), "PROJECT")

    state = json.loads(read(folder / "state.json"))
    events = [json.loads(line) for line in read(work / ".phasegate/events.jsonl").splitlines()]
    return dict(_steady({"state": state, "events": events,
                         "policy": json.loads(read(folder / "policy.json"))}))  # fmt: skip


def _warm_pid(work: Path) -> int:
    door = SessionFiles(work.resolve(), SESSION).read("warm")
    assert door is not None
    return int(door["pid"])


def test_a_stop_answered_by_the_warm_gate_equals_one_answered_cold(tmp_path: Path) -> None:
    cold_work, cold_env, cold_stop = _started(tmp_path, "cold", warm_gate=False)
    warm_work, warm_env, warm_stop = _started(tmp_path, "warm", warm_gate=True)
    cold = _plugin("hook", "stop", env=cold_env, stdin=cold_stop)
    answered = imports_of("-m", "phasegate._plugin", "hook", "stop", stdin=warm_stop, env=warm_env)
    assert answered.returncode == 0, answered.stderr
    assert "pydantic" not in answered.modules  # the warm gate did the work
    assert json.loads(answered.stdout)["decision"] == "block"
    assert answered.stdout == cold
    assert _record(warm_work) == _record(cold_work)
    _plugin("stop", env=warm_env)


def test_a_dead_warm_gate_leaves_the_stop_to_the_hook(tmp_path: Path) -> None:
    cold_work, cold_env, cold_stop = _started(tmp_path, "cold", warm_gate=False)
    work, env, stop = _started(tmp_path, "warm", warm_gate=True)
    pid = _warm_pid(work)
    os.kill(pid, signal.SIGKILL)
    _until(lambda: not _is_running(pid), "the warm gate to die")
    door = SessionFiles(work.resolve(), SESSION).read("warm")
    assert door is not None
    shutil.rmtree(Path(door["socket"]).parent)  # what it could not remove, killed
    assert (work / ".phasegate/plugin" / SESSION / "warm.json").is_file()
    said = _plugin("hook", "stop", env=env, stdin=stop)
    assert said == _plugin("hook", "stop", env=cold_env, stdin=cold_stop)
    assert _record(work) == _record(cold_work)


def test_the_warm_gate_refuses_another_sessions_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(warm.SWITCH, "1")  # this process asks as a hook would (tests: off)
    work, env, stop = _started(tmp_path, "warm", warm_gate=True)
    files = SessionFiles(work.resolve(), SESSION)
    before = files.read()
    other = {**json.loads(stop), "session_id": "else-0000-0000-0000-000000000001"}
    assert warm.ask(other, files, dict(env), time.time()) is warm.NO_ANSWER
    assert files.read() == before
    assert _is_running(_warm_pid(work))  # it refused, and goes on serving its own session
    _plugin("stop", env=env)


def test_no_warm_gate_is_left_once_the_run_is_stopped_or_accepted(tmp_path: Path) -> None:
    stopped, env, _ = _started(tmp_path, "stopped", warm_gate=True)
    pid = _warm_pid(stopped)
    _plugin("stop", env=env)
    _until(lambda: not _is_running(pid), "the stopped run's warm gate to end")
    assert not (stopped / ".phasegate/plugin" / SESSION / "warm.json").exists()
    gone, env, _ = _started(tmp_path, "gone", warm_gate=True)
    pid = _warm_pid(gone)
    shutil.rmtree(gone / ".phasegate")  # the session's state is gone
    _until(lambda: not _is_running(pid), "the warm gate of a deleted state to end")
