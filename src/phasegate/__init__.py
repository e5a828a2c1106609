"""phasegate: make coding agents do structured, phased work, and prove they did it.

The public API is what ``__all__`` lists: loading and modelling tasks and pipelines,
running them (:class:`Runner`, :class:`PipelineRunner`, :class:`ClaudeAgent`, the
:class:`Agent` protocol, :class:`RetryPolicy`), batches of them (:func:`load_batch`,
:class:`BatchRunner` and its executors), their reports, event sinks, judging saved
transcripts, and the errors and warnings. Everything else lives in the subpackages and may
move between versions; the fakes for tests are in :mod:`phasegate.testing`.
"""

from __future__ import annotations

from phasegate._lazy import lazy_attributes

# The public names are declared once, in __init__.pyi next to this file (what type checkers
# read); Names resolve on first use, so `phasegate --help` and `phasegate report` do not pay for
# pydantic, jsonschema and structlog they never touch.
__getattr__, __dir__, __all__ = lazy_attributes(__name__, __file__)
