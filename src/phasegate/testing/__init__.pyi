# The public API of this package, declared once: each `from M import Name as Name` below is
# a public name, read by phasegate._lazy for __all__ and the lazy imports (see __init__.py).

from phasegate.testing.model_server import RecordedRequest as RecordedRequest
from phasegate.testing.model_server import ScriptedModelServer as ScriptedModelServer
from phasegate.testing.script import HttpFault as HttpFault
from phasegate.testing.script import Reply as Reply
from phasegate.testing.script import Script as Script
from phasegate.testing.script import ScriptCursor as ScriptCursor
from phasegate.testing.script import ToolStep as ToolStep
from phasegate.testing.script import Unmatched as Unmatched
from phasegate.testing.script import load_script as load_script
from phasegate.testing.scripted_agent import ScriptedAgent as ScriptedAgent

__all__: list[str]
