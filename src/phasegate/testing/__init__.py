"""Fakes for testing phased tasks offline: scripts of model replies, the in-process agent
that replays them, and the model server that lets the real Claude Code CLI replay them.
``phasegate.testing`` is public API; the project's own tests use it too."""

from __future__ import annotations

from typing import TYPE_CHECKING

from phasegate._lazy import lazy_attributes

if TYPE_CHECKING:
    from phasegate.agents.scripted.model_server import RecordedRequest, ScriptedModelServer
    from phasegate.agents.scripted.script import (
        HttpFault,
        Reply,
        Script,
        ScriptCursor,
        ToolStep,
        Unmatched,
        load_script,
    )
    from phasegate.agents.scripted.agent import ScriptedAgent

# Names resolve on first use: the pytest plugin below this package loads in every pytest
# session of a project that has phasegate installed.
_WHERE = {
    "HttpFault": "phasegate.agents.scripted.script",
    "RecordedRequest": "phasegate.agents.scripted.model_server",
    "Reply": "phasegate.agents.scripted.script",
    "Script": "phasegate.agents.scripted.script",
    "ScriptCursor": "phasegate.agents.scripted.script",
    "ScriptedAgent": "phasegate.agents.scripted.agent",
    "ScriptedModelServer": "phasegate.agents.scripted.model_server",
    "ToolStep": "phasegate.agents.scripted.script",
    "Unmatched": "phasegate.agents.scripted.script",
    "load_script": "phasegate.agents.scripted.script",
}

__all__ = [
    "HttpFault",
    "RecordedRequest",
    "Reply",
    "Script",
    "ScriptCursor",
    "ScriptedAgent",
    "ScriptedModelServer",
    "ToolStep",
    "Unmatched",
    "load_script",
]

__getattr__, __dir__ = lazy_attributes(__name__, _WHERE)
