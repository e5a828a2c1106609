"""Which gated work a session has, and who answers for it: a task (:mod:`.gated`), or a
pipeline or a loop (:mod:`.flows`), by the ``kind`` of the session's state.

The commands, the Stop hook and the PreToolUse policy check come through here, so neither
module imports the other's way round (:mod:`.flows` reuses :mod:`.gated`'s reading of the
session; :mod:`.gated` knows nothing of pipelines).
"""

from __future__ import annotations

import os
from typing import Any

from phasegate._plugin.state import SessionFiles, project_dir, valid_session

FLOWS = ("pipeline", "loop")
"""The commands, and the kinds of gated work, :mod:`.flows` owns."""


def _flow_state(files: SessionFiles | None) -> dict[str, Any] | None:
    """The session's running pipeline or loop, if that is its gated work."""
    state = files.read() if files is not None else None
    if state is None or state.get("kind") not in FLOWS:
        return None
    return state


def _session_files(hook_input: dict[str, Any] | None) -> SessionFiles | None:
    """The files of the hook's session (None: a command's, from the environment)."""
    if hook_input is None:
        named: object = os.environ.get("CLAUDE_CODE_SESSION_ID")
    else:
        named = hook_input.get("session_id")
    session = valid_session(named)
    return SessionFiles(project_dir(hook_input), session) if session is not None else None


def command_main(command: str, args: list[str]) -> str:
    """What ``command`` prints: ``pipeline`` and ``loop``, and ``status``/``stop`` of a
    pipeline or loop, by :mod:`.flows`; everything else by :mod:`.gated`."""
    if command in FLOWS or (
        command in ("status", "stop") and _flow_state(_session_files(None)) is not None
    ):
        from phasegate._plugin.flows import command_main as flow_command

        before = _running_id(_session_files(None))
        said = flow_command(command, args)
        files = _session_files(None)
        if command in FLOWS and files is not None and _running_id(files) not in (None, before):
            from phasegate._plugin import warm

            warm.start(files)
        return said
    from phasegate._plugin.gated import command_main as task_command

    before = _running_id(_session_files(None))
    said = task_command(command, args)
    files = _session_files(None)
    if command == "run" and files is not None and _running_id(files) not in (None, before):
        from phasegate._plugin import warm

        warm.start(files)
    return said


def _running_id(files: SessionFiles | None) -> str | None:
    """The run id of the session's running gated work, if it has any."""
    state = files.read() if files is not None else None
    if state is None or state.get("status") != "running":
        return None
    return str(state.get("run_id"))


def on_stop(hook_input: dict[str, Any], started: float | None = None) -> dict[str, Any] | None:
    """The Stop hook of whatever gated work the session has: None, on the standard library
    alone, when nothing runs in it (every turn of most sessions ends here). ``started``: when
    the hook started (a :func:`time.time`), which bounds a task's checks and a grader."""
    files = _session_files(hook_input)
    state = files.read() if files is not None else None
    if files is None or state is None or state.get("status") != "running":
        return None
    if state.get("kind") in FLOWS:
        from phasegate._plugin.flows import on_stop as flow_stop

        return flow_stop(files, state, hook_input, started)
    from phasegate._plugin.gated import on_stop as task_stop

    return task_stop(hook_input, started=started)


def refusal(files: SessionFiles, hook_input: dict[str, Any]) -> str | None:
    """Why the session's gated work refuses this call, or None (PreToolUse)."""
    state = _flow_state(files)
    if state is not None:
        if state.get("status") != "running":
            return None
        from phasegate._plugin.flows import refusal as flow_refusal

        return flow_refusal(files, state, hook_input)
    from phasegate._plugin.gated import refusal as task_refusal

    return task_refusal(files, hook_input)


def stop_output(hook_input: dict[str, Any], started: float | None = None) -> dict[str, Any] | None:
    """The Stop hook's output, whoever runs it (the hook, or the session's warm gate, given
    when the hook started): the gate's answer, or one line saying why there is none."""
    try:
        return on_stop(hook_input, started)
    except Exception as exc:  # never a loop: the turn ends, with one line saying why
        return {
            "systemMessage": f"phasegate: the gate check failed ({type(exc).__name__}: "
            f"{exc}); this turn ends unchecked. Type /phasegate:status to see the "
            "gated work, or /phasegate:stop to end it."
        }


def warm_up() -> None:
    """Import what a gated Stop uses, task or pipeline (the warm gate, before it listens)."""
    import importlib

    for module in ("phasegate._plugin.gated", "phasegate._plugin.flows",
                   "phasegate.tasks.gate", "phasegate.tasks.progress",
                   "phasegate.tasks.recorded", "phasegate.tasks.transcript_file",
                   "phasegate.tasks.assembly", "phasegate.recording.recorder",
                   "phasegate.recording.page", "phasegate.workspace.observer",
                   "phasegate.telemetry.log", "phasegate.validators.stage_checks",
                   "phasegate.workspace.checks", "phasegate._plugin.checks",
                   "jsonschema", "yaml"):  # fmt: skip
        importlib.import_module(module)
