"""Claude Code's words in a hook's input, as the gate takes them: the names Claude Code gives
the plugin's completion tools, and the subagent a call was made in.

Claude Code names a plugin's MCP tool ``mcp__plugin_<plugin>_<server>__<tool>`` (2.1.332,
verified: docs/claude-code.md), so the plugin's ``phase_complete`` reaches the session as
``mcp__plugin_phasegate_phasegate__phase_complete``, where ``phasegate run``'s in-process
server gives ``mcp__phasegate__phase_complete``. The gate, the tool policy and the report
know the latter (:mod:`phasegate.phases.completion`): the plugin's names are mapped to them
wherever the session's calls are read. Standard library only (PreToolUse imports it).
"""

from __future__ import annotations

from typing import Any

SERVER = "phasegate"
"""The plugin's MCP server, as its manifest names it."""
PLUGIN_PREFIX = f"mcp__plugin_phasegate_{SERVER}__"
"""How Claude Code prefixes the plugin server's tools."""
GATE_PREFIX = "mcp__phasegate__"
"""How ``phasegate run`` names them (:data:`phasegate.phases.completion.TOOL_SERVER`)."""


def gate_name(name: str) -> str:
    """``name`` as the gate knows it: a plugin completion tool's name mapped to
    ``phasegate run``'s; any other name unchanged."""
    return GATE_PREFIX + name[len(PLUGIN_PREFIX) :] if name.startswith(PLUGIN_PREFIX) else name


def subagent_fields(hook_input: dict[str, Any]) -> dict[str, str]:
    """The hook input's ``agent_id`` and ``agent_type`` (present inside a subagent), kept
    as they came: the Stop hook reads them back with
    :meth:`~phasegate.evidence.transcript.AgentRef.from_hook` (not imported here: it loads
    pydantic, and this runs on every tool call)."""
    return {
        key: value
        for key in ("agent_id", "agent_type")
        if isinstance(value := hook_input.get(key), str) and value
    }
