"""How long each of the plugin's hook entry points takes, against a bare Python start.

A plugin hook is a new process on every tool call of the user's own session, so its start-up
is the user's latency. Each entry point runs as the launcher runs it (``python -m
phasegate._plugin hook ...`` with the hook input on stdin), in a project with a gated task
started by the real ``run`` command, and with a session log written as Claude Code writes it:

* ``pre, ungated``: PreToolUse in a session with no gated task (every call of most sessions);
* ``pre, gated``: PreToolUse for a call the task's policy does not guard (Read, no protect);
* ``post, gated``: PostToolUse in a gated session (one evidence line appended);
* ``stop, ungated``: Stop in a session of the same project with nothing gated (every turn of
  most sessions);
* ``stop, failing``: the gate rejects (the model claimed the fix without editing): feedback;
* ``stop, passing``: the gate accepts: report, events and recording written.

Every stop here is the hook doing the work itself (``PHASEGATE_PLUGIN_WARM=0``): the warm
gate's figures, at the end, were measured apart (a warm gate started before each stop).

The floor is ``python -c pass`` with the same interpreter, measured in the same run,
interleaved with the others. The hooks run as an installed plugin runs them, with the
modules' bytecode cached (a first, untimed round fills a cache in a temporary folder);
``--no-bytecode`` compiles phasegate's modules at every start instead, as an editable install
does under ``PYTHONDONTWRITEBYTECODE=1``. ``--against SRC`` times another phasegate source
folder (``git archive main src | tar -x -C /tmp/main``, then ``--against /tmp/main/src``)
interleaved in the same run, as "before". Printed: the load average before and after, each
median (wall), its distance from the floor, and the median CPU time (user + system, which
wanders less on a shared machine); the targets (issue 43) are pre and post within 50 ms of
the floor, stop within 300 ms (this task runs no commands of its own). Nothing is asserted.

Run with ``make bench`` or ``.venv/bin/python bench/hooks.py [--runs N] [--no-bytecode]
[--against SRC]``.

Where a Stop's time goes (2026-11-27, main at 522a977, profiled with ``-X importtime``,
cProfile and instruction counts under valgrind, which do not wander with the load): nearly
all of it is importing. Once the modules are loaded, the check itself takes 10 to 17 ms
(reading and validating the task file 4.5 ms, the session log, hashing the work directory,
judging, writing the state, events and, on a pass, the report and recording 7.5 ms). Of
the imports, in a failing task stop: pydantic's own machinery about 30% (its plugin loader
imports ``importlib.metadata`` and scans every installed package's entry points, its types
import ``secrets``/``hmac``/``_hashlib``), building phasegate's pydantic models about 20%
(the transcript entries, the task with its inputs and phases), jsonschema with referencing,
attrs and rpds 12% (this task has an output schema), PyYAML 5% (a YAML task file), the event
dataclasses 4%, the validators 6%. A pipeline stop (prd-to-code's first stage, failing or
handing over) costs the same. Without cached bytecode, compiling phasegate's modules adds
about 150 ms to every gated stop: the earlier figures (+459 and +584 ms) were measured so.

What changed: a Stop with nothing running in its session reads the state and leaves on the
standard library (it imported the whole gate: 978M instructions, now 111M, against 40M for
``python -c pass``); a failing stop no longer imports the recorder (``issue_records`` lives
with ``IssueRecord``) nor the stage checks and their models (only a pipeline stage's
``protect`` outcome needs them), and nothing on a stop imports ``urllib.request`` (with
``http.client``, ``email`` and ``ssl``): instructions 1419M -> 1333M failing, 1561M ->
1488M passing. A task's stops keep the work directory's hashes (``hashes.json``), so a stop
reads only the files that changed: this 1-file project shows nothing, a 739-file one
(phasegate's own tree) takes 23 ms instead of 78 ms per snapshot. Tried and not kept:
pydantic's ``defer_build`` on every model (1419M -> 1408M: a stop validates the task and the
transcript, so their models are built anyway).

Measured on the 2-core shared machine, bytecode cached, 21 runs, main interleaved as
"before", in the quietest window of the evening (load average 0.89 before the run, 1.03
after: the bench itself): floor 13.1 ms; pre ungated +19.4 ms, pre gated +18.6, post gated
+19.7 (before: +20.0, +18.3, +19.5); stop ungated +19.6 (before +219.9); stop failing +303.8
(before +337.1); stop passing +359.1 (before +382.6). Other runs the same evening, load 1.1
to 1.9: stop failing +320.7, +342.0, +401.2 (before +361.3, +336.7, +435.2), stop passing
+373.6, +369.2, +481.8 (before +390.2, +382.3, +455.8): the load moves these medians by more
than the 6% the change saves, which the instruction counts show. Without cached bytecode
(``--no-bytecode``, load 1.37): stop failing +363.9 (before +442.6), passing +448.7 (before
+468.5). The 300 ms target is not met (failing is at it in a quiet window, passing about 60
ms over): what is left is importing pydantic, jsonschema, PyYAML and the core's models and
events, which the gate needs (docs/plugin.md, "Hook latency").

Second round (2026-11-27, branch stop-warm; instructions counted with callgrind, bytecode
cached, one stop each, the same state): the hooks set ``PYDANTIC_DISABLE_PLUGINS`` for
themselves before pydantic loads (its loader scanned the 109 distributions of this venv's
entry points, about 8 ms; ``importlib.metadata`` itself is still imported by pydantic's
loader), not passed to the check commands: stop failing 1346M -> 1316M instructions (-2.2%),
stop passing 1499M -> 1479M (-1.3%). The plugin's own runtime byte-compiles its copy of
phasegate at set-up (the launcher): under ``PYTHONDONTWRITEBYTECODE=1`` a failing stop from
sources without bytecode takes 1770M instructions, from the compiled copy 1316M (-26%, the
~150 ms above). Not done: rendering a passing stop's page from memory instead of reading back
the recording just written (reading it back takes 0.6 ms once the modules are loaded; the
page's reader is the one path, and skipping it would save no import, since the page's types
live in ``recording/reading.py``); what does bring a gated stop near the floor is the warm
gate (below), since the check itself is 10 to 17 ms. Wall clock in the same run, 21 runs,
main as "before", load 2.03 before and 2.90 after (no quiet window this evening): floor
18.7 ms; stop failing +489.8 (before +524.7); stop passing +636.6 (before +616.0): at this
load the medians move by more than the 1 to 2% the change saves, which the instruction counts
show.

The warm gate (``phasegate/_plugin/warm.py``, docs/plugin.md "The warm gate"): the session's
background process has imported the gate, the Stop hook hands it the input over a Unix socket
on the standard library alone. Measured the same evening, 9 runs interleaved with the hook
doing the work itself and the floor, a warm gate started (and ready) before each warm stop,
bytecode cached, with the plugin's real-CLI tests running beside it (load 5.9, 3.8, 2.9):
floor 31.4 ms; stop failing +101.8 ms warm against +795.9 cold; stop passing +159.9 warm
against +918.3 cold. Both within the 300 ms target at that load; what is left is the check
itself, a Python start and the socket round trip.

A task's checks (2026-11-29, branch plugin; instructions counted with callgrind, one cold stop
each of this task, which has no checks, bytecode cached, twice, the same within 0.1%): main
at 40f54ef loaded the checks' evaluation and the disk that runs their commands at every
stop (through the check runs' types and the gate's checks), now loaded only for a task with
checks (``phasegate._plugin.checks``): stop failing 1511M -> 1497M, passing 1733M -> 1723M.
Against 2cfc67e, before checks, 1453M and 1642M: what is left is the check models, which
load with every task (a phase may hold checks: ``phasegate.phases.checks``, about 3 ms of
import), and what main added since. A check's own time is the command's, apart from these.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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
OTHER = "other-0000-0000-0000-000000000001"
"""A session of the same project with no gated work."""
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
    env = {**os.environ, "CLAUDE_CODE_SESSION_ID": SESSION, "CLAUDE_PROJECT_DIR": str(work),
           "PHASEGATE_PLUGIN_WARM": "0"}  # fmt: skip
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


def _environment(*, bytecode: bool, cache: Path) -> dict[str, str]:
    """The hooks' environment: as an installed plugin runs them, with the modules' bytecode
    cached (in ``cache``, filled by an untimed first round); ``bytecode`` False compiles
    every phasegate module at every start, as under ``PYTHONDONTWRITEBYTECODE=1`` with
    phasegate's sources on the path (an editable install)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("CLAUDE_PROJECT_DIR", "PYTHONPATH", "PYTHONPYCACHEPREFIX")}  # fmt: skip
    env["PHASEGATE_PLUGIN_WARM"] = "0"  # the hook doing the work itself (docstring)
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(cache)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="runs of each (default 15)")
    parser.add_argument(
        "--no-bytecode",
        action="store_true",
        help="compile phasegate's modules at every start (no bytecode cache)",
    )
    parser.add_argument("--against", type=Path, metavar="SRC",
                        help="another phasegate source folder (e.g. main's src/, from git "
                        "archive) timed interleaved in the same run, as 'before'")  # fmt: skip
    options = parser.parse_args()
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

        def stop_input(fields: dict[str, str], session: str = SESSION) -> str:
            return json.dumps({k: fields[k] if k in ("transcript_path", "cwd",
                               "hook_event_name", "last_assistant_message") else
                               session if k == "session_id" else
                               json.loads(fields[k]) for k in fields})  # fmt: skip

        def reset(work: Path) -> None:
            (work / f".phasegate/plugin/{SESSION}/state.json").write_bytes(state[work])
            (work / f".phasegate/plugin/{SESSION}/policy.json").write_text(
                json.dumps({"active": True, "guarded": [], "protect": False})
            )
            shutil.rmtree(work / ".phasegate/recordings", ignore_errors=True)

        read = {"tool_name": "Read", "tool_input": {"file_path": "app.py"}, "tool_use_id": "t9"}
        hook = ["-m", "phasegate._plugin", "hook"]
        cases: dict[str, tuple[list[str], str, Path | None]] = {
            "floor: python -c pass": (["-c", "pass"], "", None),
            "pre, ungated": ([*hook, "pre"],
                             json.dumps({"session_id": OTHER, "cwd": str(failing), **read}),
                             None),
            "pre, gated": ([*hook, "pre"],
                           hook_input(failing, hook_event_name="PreToolUse", **read), failing),
            "post, gated": ([*hook, "post"],
                            hook_input(failing, hook_event_name="PostToolUse", **read), failing),
            "stop, ungated": ([*hook, "stop"], stop_input(stop_failing, OTHER), None),
            "stop, failing": ([*hook, "stop"], stop_input(stop_failing), failing),
            "stop, passing": ([*hook, "stop"], stop_input(stop_passing), passing),
        }  # fmt: skip
        env = _environment(bytecode=not options.no_bytecode, cache=Path(scratch, "bytecode"))
        sides = {"after": env}
        if options.against is not None:
            sides["before"] = {**env, "PYTHONPATH": str(options.against.resolve())}
        wall: dict[tuple[str, str], list[float]] = {(s, n): [] for s in sides for n in cases}
        cpu: dict[tuple[str, str], list[float]] = {(s, n): [] for s in sides for n in cases}
        load_before = os.getloadavg()
        for run in range(options.runs + 1):  # the first round fills the bytecode cache
            for name, (args, stdin, work) in cases.items():
                for side, side_env in sides.items():
                    if work is not None:
                        reset(work)
                    used, started = _children_cpu(), time.perf_counter()
                    out = subprocess.run(
                        [sys.executable, *args],
                        input=stdin,
                        env=side_env,
                        capture_output=True,
                        text=True,
                        check=True,
                    ).stdout
                    if run:
                        wall[side, name].append((time.perf_counter() - started) * 1000)
                        cpu[side, name].append((_children_cpu() - used) * 1000)
                    if name == "stop, failing":
                        assert '"decision": "block"' in out, out
                    if name == "stop, passing":
                        assert "accepted" in out, out
                    if name == "stop, ungated":
                        assert out == "", out
    load = (*load_before, *os.getloadavg())
    targets = {"pre": 50.0, "post": 50.0, "stop": 300.0}
    print(f"bytecode {'not cached' if options.no_bytecode else 'cached'}; {options.runs} runs; "
          f"load average (1, 5, 15 min) {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} before, "
          f"{load[3]:.2f} {load[4]:.2f} {load[5]:.2f} after")  # fmt: skip
    header = "".join(f"{side + ' ms':>13}{'- floor':>9}{'cpu ms':>8}" for side in sides)
    print(f"{'entry point':<24}{header}{'target':>8}")
    for name in cases:
        line = ""
        for side in sides:
            floor = statistics.median(wall[side, "floor: python -c pass"])
            median = statistics.median(wall[side, name])
            over = (
                f"{median - floor:>9.1f}" if name.startswith(("pre", "post", "stop")) else " " * 9
            )
            line += f"{median:>13.1f}{over}{statistics.median(cpu[side, name]):>8.1f}"
        target = targets.get(name.split(",")[0])
        print(f"{name:<24}{line}{'' if target is None else f'{target:>8.0f}'}")


if __name__ == "__main__":
    main()
