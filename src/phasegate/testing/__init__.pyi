# The public API of this package, declared once: each `from M import Name as Name` below is
# a public name, read by phasegate._lazy for __all__ and the lazy imports (see __init__.py).

from phasegate.agents.scripted.agent import ScriptedAgent as ScriptedAgent
from phasegate.agents.scripted.model_server import RecordedRequest as RecordedRequest
from phasegate.agents.scripted.model_server import ScriptedModelServer as ScriptedModelServer
from phasegate.agents.scripted.script import HttpFault as HttpFault
from phasegate.agents.scripted.script import Reply as Reply
from phasegate.agents.scripted.script import Script as Script
from phasegate.agents.scripted.script import ScriptCursor as ScriptCursor
from phasegate.agents.scripted.script import ToolStep as ToolStep
from phasegate.agents.scripted.script import Unmatched as Unmatched
from phasegate.agents.scripted.script import load_script as load_script

__all__: list[str]
