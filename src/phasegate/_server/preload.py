"""What the fork server does once, so that no run has to: imports, and caches every run fills.

Importing this module is the work: the fork server imports it before forking any run, and
each run starts from its memory. Measured in a forked run, the imports (phasegate, the
agent's SDK and the event loop backend it loads on its first call) took a second, and the
first check of a schema against JSON Schema's meta-schema another 80 ms.
"""

from __future__ import annotations

import anyio._backends._asyncio
import anyio.streams.stapled
import anyio.streams.tls  # noqa: F401

import phasegate._server.run_process
import phasegate.agents.claude.adapter
import phasegate.agents.scripted.model_server  # noqa: F401  (offline runs replay a model script)
from phasegate.phases.schemas import schema_problem
from phasegate.agents.claude.session import import_sdk

import_sdk()
schema_problem({"type": "object", "properties": {"files": {"type": "array"}}})
