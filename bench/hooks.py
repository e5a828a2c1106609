"""How long each of the plugin's hook entry points takes, against a bare Python start.

A plugin hook is a new process on every tool call of the user's own session, so its start-up
is the user's latency. Each entry point runs as the launcher runs it (``python -m
phasegate._plugin hook ...`` with the hook input on stdin), in a project with a gated task
started by the real ``run`` command, and with a session log written as Claude Code writes it:

* ``pre, ungated``: PreToolUse in a session with no gated task (every call of most sessions);
* ``pre, gated``: PreToolUse for a call the task's policy does not guard (Read, no protect);
* ``post, gated``: PostToolUse in a gated session (one evidence line appended);
* ``stop, failing``: the gate rejects (the model claimed the fix without editing): feedback;
* ``stop, passing``: the gate accepts: report, events and recording written.

The floor is ``python -c pass`` with the same interpreter, measured in the same run,
interleaved with the others. Printed: each median and its distance from the floor; the
targets (issue 43) are pre and post within 50 ms of the floor, stop within 300 ms (this task
runs no commands of its own). Nothing is asserted.

Run with ``make bench`` or ``.venv/bin/python bench/hooks.py [--runs N]``.

Measured on the 2-core development machine (shared, noisy), 11 runs each: floor 12.5 ms;
pre ungated +22.8 ms, pre gated (unguarded call) +23.5, post gated +25.1 (within the 50 ms
target); stop failing +499 ms and stop passing +455 ms, over the 300 ms target: most of it is
importing the core's pydantic models (the transcript entries, the task model) and jsonschema,
which every gate check needs; an earlier run under heavier load gave +670 and +770 ms.

jsonschema and referencing now load with the first schema checked (not at import). Measured
on 2026-11-27 with the machine under heavy shared load (floor 29 ms), a failing Stop, main
against this change interleaved in one run, 9 runs each (/tmp script, not kept): the example
task (it has an output schema) 1565 -> 1194 ms, a task with no schema 1209 -> 999 ms. The
load makes both figures far above the unloaded ones above, and the schema case's gain is
mostly noise (it still imports jsonschema); the schema-less one drops ~0.1 s of imports
(jsonschema, referencing, rpds, attrs), which ``-X importtime`` shows directly.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "fix-vulnerability"
SESSION = "bench-0000-0000-0000-000000000001"
FIXED = "    return float(expression)  # only numbers\n"
BUGGY = "    return eval(expression)  # runs any Python the user sends, not just arithmetic\n"
CLAIM = (
    "PHASE 1 COMPLETE: Files have been edited\n\n```json\n"
    '{"files_changed": ["app.py"], "description": "Replaced eval with float parsing."}\n```'
)


def _module(*args: str, stdin: str = "", env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "phasegate._plugin", *args],
        input=stdin, capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    return done.stdout


def _line(kind: str, content: object, cwd: Path, number: int) -> str:
    message = {"role": kind, "content": content}
    if kind == "assistant":
        message |= {"id": f"msg_{number}", "model": "bench", "type": "message"}
    return json.dumps({"type": kind, "message": message, "cwd": str(cwd), "uuid": str(number)})


def gated_project(folder: Path, *, edited: bool) -> tuple[Path, dict[str, str]]:
    """A project with the example task started in session :data:`SESSION`, and a session log
    in which the model claims the fix, having made it (``edited``) or not; the Stop input."""
    work = folder / "project"
    shutil.copytree(EXAMPLE / "project", work)
    env = {**os.environ, "CLAUDE_CODE_SESSION_ID": SESSION, "CLAUDE_PROJECT_DIR": str(work)}
    prompt = _module("run", str(EXAMPLE / "task.yaml"), env=env)
    app = work / "app.py"
    lines = [_line("user", prompt, work, 0)]
    if edited:
        app.write_text(app.read_text().replace(BUGGY, FIXED))
        edit = {"file_path": str(app), "old_string": BUGGY, "new_string": FIXED}
        lines += [
            _line("assistant", [{"type": "tool_use", "id": "t1", "name": "Edit", "input": edit}],
                  work, 1),
            _line("user", [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}],
                  work, 2),
        ]  # fmt: skip
    lines.append(_line("assistant", [{"type": "text", "text": CLAIM}], work, 3))
    log = folder / "session.jsonl"
    log.write_text("\n".join(lines) + "\n")
    stop = {"session_id": SESSION, "transcript_path": str(log), "cwd": str(work),
            "hook_event_name": "Stop", "stop_hook_active": False,
            "last_assistant_message": CLAIM}  # fmt: skip
    return work, {k: json.dumps(v) if not isinstance(v, str) else v for k, v in stop.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="runs of each (default 15)")
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory(prefix="phasegate-bench-hooks-") as scratch:
        failing_dir, passing_dir = Path(scratch, "failing"), Path(scratch, "passing")
        failing_dir.mkdir()
        passing_dir.mkdir()
        failing, stop_failing = gated_project(failing_dir, edited=False)
        passing, stop_passing = gated_project(passing_dir, edited=True)
        state = {p: (p / f".phasegate/plugin/{SESSION}/state.json").read_bytes()
                 for p in (failing, passing)}  # fmt: skip

        def hook_input(work: Path, **fields: object) -> str:
            return json.dumps({"session_id": SESSION, "cwd": str(work), **fields})

        def stop_input(fields: dict[str, str]) -> str:
            return json.dumps({k: fields[k] if k in ("session_id", "transcript_path", "cwd",
                               "hook_event_name", "last_assistant_message") else
                               json.loads(fields[k]) for k in fields})  # fmt: skip

        def reset(work: Path) -> None:
            (work / f".phasegate/plugin/{SESSION}/state.json").write_bytes(state[work])
            (work / f".phasegate/plugin/{SESSION}/policy.json").write_text(
                json.dumps({"active": True, "guarded": [], "protect": False})
            )
            shutil.rmtree(work / ".phasegate/recordings", ignore_errors=True)

        read = {"tool_name": "Read", "tool_input": {"file_path": "app.py"}, "tool_use_id": "t9"}
        cases: dict[str, tuple[list[str], str, Path | None]] = {
            "floor: python -c pass": (["-c", "pass"], "", None),
            "pre, ungated": (["-m", "phasegate._plugin", "hook", "pre"],
                             json.dumps({"session_id": "other-session-1", "cwd": str(failing),
                                         **read}), None),
            "pre, gated": (["-m", "phasegate._plugin", "hook", "pre"],
                           hook_input(failing, hook_event_name="PreToolUse", **read), failing),
            "post, gated": (["-m", "phasegate._plugin", "hook", "post"],
                            hook_input(failing, hook_event_name="PostToolUse", **read), failing),
            "stop, failing": (["-m", "phasegate._plugin", "hook", "stop"],
                              stop_input(stop_failing), failing),
            "stop, passing": (["-m", "phasegate._plugin", "hook", "stop"],
                              stop_input(stop_passing), passing),
        }  # fmt: skip
        times: dict[str, list[float]] = {name: [] for name in cases}
        env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
        for _ in range(runs):
            for name, (args, stdin, work) in cases.items():
                if work is not None:
                    reset(work)
                started = time.perf_counter()
                out = subprocess.run(
                    [sys.executable, *args],
                    input=stdin,
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
                times[name].append((time.perf_counter() - started) * 1000)  # fmt: skip
                if name == "stop, failing":
                    assert '"decision": "block"' in out, out
                if name == "stop, passing":
                    assert "accepted" in out, out
    floor = statistics.median(times["floor: python -c pass"])
    targets = {"pre": 50.0, "post": 50.0, "stop": 300.0}
    print(f"{'entry point':<24}{'median ms':>10}{'- floor':>10}{'target':>9}")
    for name, values in times.items():
        median = statistics.median(values)
        target = targets.get(name.split(",")[0])
        over = f"{median - floor:>10.1f}" if target is not None else f"{'':>10}"
        print(f"{name:<24}{median:>10.1f}{over}{'' if target is None else f'{target:>9.0f}'}")


if __name__ == "__main__":
    main()
