"""Fakes for testing phased tasks offline: scripts of model replies and the agents that
replay them. ``phasegate.testing`` is public API; the project's own tests use it too."""

from phasegate.testing.script import HttpFault, Reply, Script, ScriptCursor, ToolStep, load_script
from phasegate.testing.scripted_agent import ScriptedAgent

__all__ = [
    "HttpFault",
    "Reply",
    "Script",
    "ScriptCursor",
    "ScriptedAgent",
    "ToolStep",
    "load_script",
]
