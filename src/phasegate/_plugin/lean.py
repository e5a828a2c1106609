"""The hook entry points that run on every tool call: PreToolUse and PostToolUse(Failure).

They cost the user's latency on each call, so they import only the standard library and
:mod:`.state` and leave at once when the session has no gated work (no ``policy.json`` for
its session id). PreToolUse loads the tool policy (:mod:`.gated`) only for a call the gated
task's policy may refuse; a check that fails then refuses the call with the reason (fails
closed), as the SDK adapter's PreToolUse hook does.
"""

from __future__ import annotations

from typing import Any

from phasegate._plugin.state import SessionFiles, project_dir, valid_session
from phasegate._plugin.tools import gate_name, subagent_fields


def session_files(hook_input: dict[str, Any]) -> SessionFiles | None:
    """The files of this hook's session in its project, or None for a session without one."""
    session = valid_session(hook_input.get("session_id"))
    if session is None:
        return None
    return SessionFiles(project_dir(hook_input), session)


def before_tool(hook_input: dict[str, Any]) -> dict[str, Any] | None:
    """PreToolUse: None lets the call go on (the CLI's own permission checks still apply);
    otherwise the hook output that denies it, with the reason the model sees, or that lets
    the plugin's own completion tools run without asking while a task is gated."""
    files = session_files(hook_input)
    policy = files.read("policy") if files is not None else None
    if files is None or policy is None or not policy.get("active"):
        return None
    raw = str(hook_input.get("tool_name") or "")
    name = gate_name(raw)
    guarded = policy.get("guarded")
    offered = policy.get("offered")
    if (
        not policy.get("protect")
        and guarded != "all"
        and name not in (guarded or ())
        and (offered is None or name in offered)
    ):
        return _allowed() if name != raw else None
    try:
        from phasegate._plugin.dispatch import refusal

        reason = refusal(files, hook_input)
    except Exception as exc:  # fail closed: a policy that cannot be checked refuses
        reason = (
            f"Refused: phasegate could not check this call against the task's tool policy "
            f"({type(exc).__name__}: {exc}). Type /phasegate:stop to end the gated task."
        )
    if reason is None:
        return _allowed() if name != raw else None
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


def _allowed() -> dict[str, Any]:
    """The plugin's own completion tools run without asking the user: they only judge."""
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": "phasegate's completion tool for the gated task",
        }
    }


def after_tool(hook_input: dict[str, Any]) -> None:
    """PostToolUse and PostToolUseFailure: one evidence line per call of a gated session
    (the CLI's own word on whether it failed, which its result text may not say), naming
    the subagent that made it (:func:`subagent_fields`)."""
    files = session_files(hook_input)
    if files is None or files.read("policy") is None:
        return
    files.append(
        {
            "kind": "result",
            "id": str(hook_input.get("tool_use_id") or ""),
            "name": str(hook_input.get("tool_name") or ""),
            "ok": hook_input.get("hook_event_name") != "PostToolUseFailure",
            **subagent_fields(hook_input),
        }
    )
