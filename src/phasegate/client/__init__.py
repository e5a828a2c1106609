"""The Python client of ``phasegate serve``, and the service's wire schema.

:class:`ServiceClient` starts runs, follows their events (:class:`ServiceEvent`) and waits
for their reports; every failure is a :class:`ServiceError`. :mod:`.schema` holds the request
and response bodies both sides use. Importing this package costs nothing: the client itself
needs the ``client`` extra (httpx), imported on first use of :class:`ServiceClient`.
"""

from __future__ import annotations

from phasegate._lazy import lazy_attributes

# The public names are declared once, in __init__.pyi next to this file (what type checkers
# read); Names resolve on first use: the client needs httpx, the schema does not.
__getattr__, __dir__, __all__ = lazy_attributes(__name__, __file__)
