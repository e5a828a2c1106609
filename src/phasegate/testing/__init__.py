"""Fakes for testing phased tasks offline: scripts of model replies, the in-process agent
that replays them, and the model server that lets the real Claude Code CLI replay them.
``phasegate.testing`` is public API; the project's own tests use it too."""

from __future__ import annotations

from typing import TYPE_CHECKING

from phasegate._lazy import lazy_attributes

if TYPE_CHECKING:
    from phasegate.testing.model_server import RecordedRequest, ScriptedModelServer
    from phasegate.testing.script import (
        HttpFault,
        Reply,
        Script,
        ScriptCursor,
        ToolStep,
        Unmatched,
        load_script,
    )
    from phasegate.testing.scripted_agent import ScriptedAgent

# Names resolve on first use: the pytest plugin below this package loads in every pytest
# session of a project that has phasegate installed.
_WHERE = {
    "HttpFault": "phasegate.testing.script",
    "RecordedRequest": "phasegate.testing.model_server",
    "Reply": "phasegate.testing.script",
    "Script": "phasegate.testing.script",
    "ScriptCursor": "phasegate.testing.script",
    "ScriptedAgent": "phasegate.testing.scripted_agent",
    "ScriptedModelServer": "phasegate.testing.model_server",
    "ToolStep": "phasegate.testing.script",
    "Unmatched": "phasegate.testing.script",
    "load_script": "phasegate.testing.script",
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
