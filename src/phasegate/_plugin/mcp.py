"""The plugin's MCP server (stdio): ``phase_complete`` and ``submit_summary`` for the gated
task of the session that started it, answered by the gate ``phasegate run`` uses.

Claude Code starts the server once per session (``mcpServers`` in the plugin's manifest,
``alwaysLoad`` so the tools are in every request rather than behind ToolSearch) with the
session's id in ``CLAUDE_CODE_SESSION_ID`` (2.1.332, verified: docs/claude-code.md). A call
is judged only when that session has a gated task running and the call itself (its
``claudecode/toolUseId``) is in that session's log from the task's prompt onwards: a server
whose session was replaced (``/clear``) cannot judge another session's task. The answer is
:meth:`~phasegate.tasks.gate.PhaseGate.answer_tool`'s, the gate's counters kept in the
session's state as the Stop hook keeps them, the check logged and recorded like a stop's.

Start-up is the standard library only: the tools are listed from the constants below (a
test holds them equal to :func:`~phasegate.prompts.completion_tools.completion_tools`'s
input schemas); the gate is imported at the first call. JSON-RPC 2.0, one message a line.
"""

from __future__ import annotations

import json
import os
import sys
from typing import IO, Any

from phasegate._plugin.tools import GATE_PREFIX

PROTOCOL = "2025-06-18"
"""The MCP version answered when the client asks for none we know."""

TOOLS: list[dict[str, Any]] = [
    {
        "name": "phase_complete",
        "description": (
            "During a phasegate task (/phasegate:run): mark one work phase complete, once its "
            "work is really done. The evidence (your tool calls, the files on disk) is checked "
            "at once; the answer is JSON whose result is success or validation_failed (with "
            "the issues to fix) and whose action says what to do next."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "phase": {"type": ["integer", "string"], "description": "The phase number."},
                "note": {"type": "string", "description": "One line: what you did."},
            },
        },
    },
    {
        "name": "submit_summary",
        "description": (
            "During a phasegate task (/phasegate:run): hand in the answer of its last phase, "
            "after every work phase is complete. `summary` is the JSON object itself, which "
            "must satisfy the schema the task's prompt gives. It is checked at once against "
            "the schema and against what you really did."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "summary": {"type": ["object", "string"], "description": "The answer object."}
            },
        },
    },
]
"""The tools as listed (names without Claude Code's ``mcp__plugin_…__`` prefix)."""


def serve(stdin: IO[str], stdout: IO[str]) -> None:
    """Answer JSON-RPC requests from ``stdin`` until it closes."""
    for line in stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict) or "id" not in message:
            continue  # a notification: nothing to answer
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        try:
            reply["result"] = _result(str(message.get("method")), message.get("params") or {})
        except LookupError:
            reply["error"] = {"code": -32601, "message": f"unknown method {message.get('method')}"}
        stdout.write(json.dumps(reply) + "\n")
        stdout.flush()


def _result(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "initialize":
        asked = params.get("protocolVersion")
        return {
            "protocolVersion": asked if isinstance(asked, str) else PROTOCOL,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "phasegate", "version": _version()},
        }
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        name = str(params.get("name") or "")
        arguments = params.get("arguments")
        meta = params.get("_meta")
        use_id = meta.get("claudecode/toolUseId") if isinstance(meta, dict) else None
        ok, text = call(name, arguments if isinstance(arguments, dict) else {}, use_id)
        return {"content": [{"type": "text", "text": text}], "isError": not ok}
    if method in ("ping", "server/discover") or method.startswith("notifications/"):
        return {}
    raise LookupError(method)


def call(name: str, arguments: dict[str, Any], use_id: object) -> tuple[bool, str]:
    """Judge one completion tool call of this server's session: whether it succeeded, and
    the answer's text (the gate's structured JSON, or an error in the same shape)."""
    try:
        from phasegate._plugin.gated import answer_completion_tool

        answer = answer_completion_tool(
            os.environ.get("CLAUDE_CODE_SESSION_ID"),
            GATE_PREFIX + name,
            arguments,
            use_id if isinstance(use_id, str) else None,
        )
    except Exception as exc:  # the model gets an answer it can act on, never a dead server
        return False, json.dumps(
            {
                "result": "error",
                "attempted": {"tool": name},
                "error": f"phasegate could not judge this call ({type(exc).__name__}: {exc})",
                "action": "Go on with the task; the gate checks your work when you stop.",
            }
        )
    return answer.ok, answer.text


def _version() -> str:
    from phasegate._plugin.version import VERSION

    return VERSION


def main() -> int:
    """Serve on the process's stdin and stdout."""
    serve(sys.stdin, sys.stdout)
    return 0
