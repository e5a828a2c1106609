"""Fakes for testing phased tasks offline: scripts of model replies, the in-process agent
that replays them, and the model server that lets the real Claude Code CLI replay them.
``phasegate.testing`` is public API; the project's own tests use it too."""

from __future__ import annotations

from phasegate._lazy import lazy_attributes

# The public names are declared once, in __init__.pyi next to this file (what type checkers
# read); Names resolve on first use: the pytest plugin below this package loads in every pytest
# session of a project that has phasegate installed.
__getattr__, __dir__, __all__ = lazy_attributes(__name__, __file__)
