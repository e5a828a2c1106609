"""``/phasegate:pipeline`` and ``/phasegate:loop`` as the processes the skills start: usage
and clear errors for bad arguments (nothing gated then), status and stop for a pipeline and a
loop, and the stage's tool policy asked by PreToolUse."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SESSION = "flows-0000-0000-0000-000000000001"

PIPELINE: dict[str, Any] = {
    "name": "two",
    "stages": [
        {"name": "read", "prompt": "Read app.py.", "exit_when": [{"tools_used": ["Read"]}],
         "allow_tools": ["Read", "Grep"]},
        {"name": "write", "prompt": "Write notes.md.", "exit_when": [{"file_exists": "notes.md"}],
         "protect": ["tests/**"]},
    ],
}  # fmt: skip


def _plugin(*args: str, work: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(work), "CLAUDE_CODE_SESSION_ID": SESSION}
    return subprocess.run(
        [sys.executable, "-m", "phasegate._plugin", *args],
        input=stdin, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def _state(work: Path) -> dict[str, Any]:
    return dict(json.loads((work / ".phasegate/plugin" / SESSION / "state.json").read_text()))


@pytest.mark.parametrize(
    ("args", "says", "usage"),
    [
        (("pipeline",), "name the pipeline file", "/phasegate:pipeline FILE"),
        (("pipeline", "missing.yaml"), "missing.yaml", "/phasegate:pipeline FILE"),
        (("pipeline", "two.json", "oops"), "'oops' is not ID=VALUE", "/phasegate:pipeline"),
        (("loop", "Fix it"), "--until CHECK, for example", "/phasegate:loop PROMPT --until"),
        (("loop", "--until", "said: DONE"), "give the prompt", "/phasegate:loop"),
        (("loop", "Fix", "--until", "nope: 1"), "'nope: 1' is not a check", "/phasegate:loop"),
        (("loop", "Fix", "--until", "min_lines: a.md"), "needs a mapping", "/phasegate:loop"),
        (("loop", "Fix", "--until", "said: D", "--max-iterations", "0"), "from 1 to 1000", "loop"),
        (("loop", "Fix", "--until"), "--until needs a value", "/phasegate:loop"),
        (("loop", "Fix", "--until=said: D", "--forever"), "unknown option '--forever'", "loop"),
    ],
)
def test_bad_arguments_say_what_is_wrong_and_gate_nothing(
    tmp_path: Path, args: tuple[str, ...], says: str, usage: str
) -> None:
    """Each message names the problem, gives the usage and tells the model to relay it; no
    state is written, and nothing is a traceback."""
    (tmp_path / "two.json").write_text(json.dumps(PIPELINE))
    done = _plugin(*args, work=tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stdout + done.stderr
    assert says in done.stdout and usage in done.stdout
    assert "Nothing is gated" in done.stdout
    assert not (tmp_path / ".phasegate").exists()


def _pre(work: Path, tool: str, path: str) -> str | None:
    hook = {"session_id": SESSION, "cwd": str(work), "hook_event_name": "PreToolUse",
            "tool_name": tool, "tool_input": {"file_path": str(work / path)},
            "tool_use_id": f"toolu_{tool}_{path.replace('/', '_')}"}  # fmt: skip
    done = _plugin("hook", "pre", work=work, stdin=json.dumps(hook))
    assert done.returncode == 0, done.stderr
    if not done.stdout.strip():
        return None
    return str(json.loads(done.stdout)["hookSpecificOutput"]["permissionDecisionReason"])


def test_a_pipelines_stage_policy_status_and_stop(tmp_path: Path) -> None:
    """The first stage allows only Read and Grep: PreToolUse lets Read through and refuses
    Edit with ``phasegate pipeline run``'s reason; status names the stage and its checks left;
    stop ends the run ``stopped`` with its closing event, and the policy lets everything by."""
    (tmp_path / "two.json").write_text(json.dumps(PIPELINE))
    started = _plugin("pipeline", "two.json", work=tmp_path)
    assert "Stage 1 of 2: read" in started.stdout and "phasegate run " in started.stdout
    assert _pre(tmp_path, "Read", "app.py") is None
    reason = _pre(tmp_path, "Edit", "app.py")
    assert reason is not None
    assert reason.startswith("Refused: Edit is not allowed in stage 1 (read)")
    second = _plugin("loop", "x", "--until", "said: D", work=tmp_path)
    assert "already runs the gated pipeline 'two'" in second.stdout
    status = _plugin("status", work=tmp_path).stdout
    assert "pipeline 'two'" in status and "stage 1 of 2 (read)" in status
    assert "checks left in this stage: 3" in status
    stopped = _plugin("stop", work=tmp_path).stdout
    assert "the gated pipeline 'two' is stopped" in stopped
    state = _state(tmp_path)
    assert state["status"] == "stopped"
    assert state["report"]["error"] == "stopped: /phasegate:stop ended the gated run"
    assert _pre(tmp_path, "Edit", "app.py") is None
    events = [
        json.loads(line) for line in (tmp_path / ".phasegate/events.jsonl").read_text().splitlines()
    ]
    assert [e["event"] for e in events] == [
        "pipeline.started", "stage.started", "tool.refused", "pipeline.completed"
    ]  # fmt: skip
    assert events[-1]["error"] == "stopped: /phasegate:stop ended the gated run"
    assert (Path(events[-1]["recording"]) / "index.html").is_file()


def test_a_loops_status_counts_its_iterations(tmp_path: Path) -> None:
    """A loop's status says which iteration it is on, of how many."""
    _plugin("loop", "Fix", "the", "tests", "--until", "command: pytest -q",
            "--max-iterations=4", work=tmp_path)  # fmt: skip
    state = _state(tmp_path)
    assert state["loop"]["until"] == [{"command": ["pytest", "-q"]}]
    status = _plugin("status", work=tmp_path).stdout
    assert "loop 'loop'" in status and "iteration 1 of 4" in status


def _pydantic_plugin(folder: Path, mark: Path) -> dict[str, str]:
    """An installed pydantic plugin (an entry point in ``folder``) that writes the loading
    program's ``sys.argv[0]`` to ``mark``; the environment that has it on the path."""
    (folder / "markplugin-0.dist-info").mkdir(parents=True)
    (folder / "markplugin-0.dist-info/METADATA").write_text(
        "Metadata-Version: 2.1\nName: markplugin\nVersion: 0\n"
    )
    (folder / "markplugin-0.dist-info/entry_points.txt").write_text(
        "[pydantic]\nmark = markplugin:plugin\n"
    )
    (folder / "markplugin.py").write_text(
        "import os, sys\n"
        "with open(os.environ['MARK_FILE'], 'a') as f:\n"
        "    f.write(sys.argv[0] + '\\n')\n"
        "class _Plugin:\n"
        "    def new_schema_validator(self, *args, **kwargs):\n"
        "        return None, None, None\n"
        "plugin = _Plugin()\n"
    )
    path = os.pathsep.join(p for p in (str(folder), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path, "MARK_FILE": str(mark)}


def test_the_stop_hook_loads_no_pydantic_plugin_but_its_check_commands_do(
    tmp_path: Path,
) -> None:
    """The Stop hook turns pydantic's plugin loader off for itself (no entry point scan), and
    a check command it runs gets the environment without that setting: the user's pydantic
    plugin loads there, as it would outside the gate."""
    work = tmp_path / "work"
    work.mkdir()
    mark = tmp_path / "loaded-by"
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(work), "CLAUDE_CODE_SESSION_ID": SESSION,
           **_pydantic_plugin(tmp_path / "site", mark)}  # fmt: skip
    builds_a_model = "import pydantic; exec('class M(pydantic.BaseModel): x: int')"
    until = f'command: {sys.executable} -c "{builds_a_model}"'
    started = subprocess.run(
        [sys.executable, "-m", "phasegate._plugin", "loop", "Go", "--until", until],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert started.returncode == 0 and _state(work)["kind"] == "loop", started.stderr
    log = tmp_path / "session.jsonl"
    reply = {"role": "assistant", "id": "m1", "model": "m", "type": "message",
             "content": [{"type": "text", "text": "Done."}]}  # fmt: skip
    log.write_text(json.dumps({"type": "assistant", "message": reply, "uuid": "1"}) + "\n")
    mark.unlink(missing_ok=True)  # the loop command itself is no hook: it may load plugins
    stop = {"session_id": SESSION, "cwd": str(work), "transcript_path": str(log),
            "hook_event_name": "Stop", "stop_hook_active": False}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "phasegate._plugin", "hook", "stop"],
        input=json.dumps(stop), env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert _state(work)["status"] == "accepted", done.stdout
    assert mark.read_text().splitlines() == ["-c"]  # the command, never the hook


def test_a_loops_until_may_be_a_sentence_and_is_kept_as_its_checks(tmp_path: Path) -> None:
    """``--until 'notes.md exists and pytest -q passes'`` is two checks, kept in their file
    form; a sentence naming a path outside the work directory is refused, gating nothing."""
    _plugin("loop", "Fix", "--until", "notes.md exists and pytest -q passes", work=tmp_path)
    assert _state(tmp_path)["loop"]["until"] == [
        {"file_exists": "notes.md"},
        {"command": ["pytest", "-q"]},
    ]
    other = tmp_path / "other"
    other.mkdir()
    refused = _plugin("loop", "Fix", "--until", "../notes.md exists", work=other)
    assert "leaves the work directory" in refused.stdout
    assert not (other / ".phasegate").exists()
