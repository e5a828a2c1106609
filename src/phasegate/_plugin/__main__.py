"""``python -m phasegate._plugin``: what the plugin's launcher runs.

``hook pre|post|stop`` reads the hook input (JSON) on stdin and prints the hook output;
``run TASK_FILE [ID=VALUE ...]``, ``pipeline FILE [ID=VALUE ...]``, ``loop PROMPT --until
CHECK``, ``status``, ``stop``, ``judge TASK_FILE`` are the
commands the plugin's skills run (their output becomes the model's instruction); ``setup``
says the runtime is ready; ``version`` prints phasegate's version; ``mcp`` serves the
completion tools over stdio (:mod:`.mcp`); ``warm SESSION`` is the session's warm gate, which
``run``, ``pipeline`` and ``loop`` start and the Stop hook asks first (:mod:`.warm`).

Hooks never fail the user's tool call or turn: anything unexpected is one line for the user
and exit 0 (PreToolUse refuses, for a gated call: see :mod:`.lean`).
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any


def _hook_input() -> dict[str, Any]:
    try:
        data = json.loads(sys.stdin.read() or "{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _print(output: dict[str, Any] | None) -> None:
    if output:
        sys.stdout.write(json.dumps(output) + "\n")


def _warm_or_cold(hook_input: dict[str, Any], started: float) -> dict[str, Any] | None:
    """The session's warm gate answers when it has one that does (:mod:`.warm`); otherwise
    this process does the same work. ``started``: when this hook started (a
    :func:`time.time`), which bounds the time a task's checks may take, in either process."""
    from phasegate._plugin.lean import session_files

    files = session_files(hook_input)
    if files is not None and files.warm_path.is_file():
        from phasegate._plugin import warm
        from phasegate._process.environment import for_commands

        answer = warm.ask(hook_input, files, for_commands(), started)
        if answer is not warm.NO_ANSWER:
            return answer  # type: ignore[no-any-return]
    from phasegate._plugin.dispatch import stop_output

    return stop_output(hook_input, started)


def main(argv: list[str]) -> int:
    """Run one command or hook; the exit code (0 whenever the session should go on)."""
    started = time.time()
    command, args = (argv[0], argv[1:]) if argv else ("help", [])
    if command in ("hook", "warm"):
        # Before pydantic loads: its plugin loader would scan every installed package's entry
        # points at the first model a gated hook builds. The check commands do not inherit it.
        from phasegate._process.environment import set_for_self

        set_for_self("PYDANTIC_DISABLE_PLUGINS", "__all__")
    if command == "hook" and args in (["pre"], ["post"]):
        from phasegate._plugin import lean

        hook_input = _hook_input()
        if args == ["pre"]:
            _print(lean.before_tool(hook_input))
        else:
            try:
                lean.after_tool(hook_input)
            except OSError as exc:
                _print({"systemMessage": f"phasegate: could not record a tool call ({exc})"})
        return 0
    if command == "hook" and args == ["stop"]:
        import signal

        # Claude Code ends a hook with SIGTERM (its timeout, the user interrupting): as an
        # exit, so a check's command running now is ended with everything it started, not
        # left to run on its own (commands run in a session of their own).
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        hook_input = _hook_input()
        _print(_warm_or_cold(hook_input, started))
        return 0
    if command == "warm" and len(args) == 1:
        from phasegate._plugin.dispatch import stop_output, warm_up
        from phasegate._plugin.warm import serve

        warm_up()
        return serve(args[0], stop_output)
    if command == "mcp":
        from phasegate._plugin.mcp import main as serve_mcp

        return serve_mcp()
    if command == "version":
        from phasegate._plugin.version import VERSION

        print(VERSION)
        return 0
    if command == "setup":
        return 0
    if command in ("run", "status", "stop", "judge", "pipeline", "loop"):
        from phasegate._plugin.dispatch import command_main

        print(command_main(command, args))
        return 0
    print(
        "usage: python -m phasegate._plugin (hook pre|post|stop | run TASK_FILE [ID=VALUE ...] "
        "| pipeline FILE [ID=VALUE ...] | loop PROMPT --until CHECK | status | stop "
        "| judge TASK_FILE | setup | version | mcp)",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
