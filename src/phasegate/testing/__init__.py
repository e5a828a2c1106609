"""Fakes for testing phased tasks offline: scripts of model replies, the in-process agent
that replays them, and the model server that lets the real Claude Code CLI replay them.
``phasegate.testing`` is public API; the project's own tests use it too."""

from phasegate.testing.model_server import RecordedRequest, ScriptedModelServer
from phasegate.testing.script import HttpFault, Reply, Script, ScriptCursor, ToolStep, load_script
from phasegate.testing.scripted_agent import ScriptedAgent

__all__ = [
    "HttpFault",
    "RecordedRequest",
    "Reply",
    "Script",
    "ScriptCursor",
    "ScriptedAgent",
    "ScriptedModelServer",
    "ToolStep",
    "load_script",
]
