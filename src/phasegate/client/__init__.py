"""The Python client of ``phasegate serve``, and the service's wire schema.

:class:`ServiceClient` starts runs, follows their events (:class:`ServiceEvent`) and waits
for their reports; every failure is a :class:`ServiceError`. :mod:`.schema` holds the request
and response bodies both sides use. Importing this package costs nothing: the client itself
needs the ``client`` extra (httpx), imported on first use of :class:`ServiceClient`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from phasegate._lazy import lazy_attributes

if TYPE_CHECKING:
    from phasegate.client.client import ServiceClient
    from phasegate.client.errors import ServiceError
    from phasegate.client.events import ServiceEvent

_WHERE = {
    "ServiceClient": "phasegate.client.client",
    "ServiceError": "phasegate.client.errors",
    "ServiceEvent": "phasegate.client.events",
}
__all__ = ["ServiceClient", "ServiceError", "ServiceEvent"]
__getattr__, __dir__ = lazy_attributes(__name__, _WHERE)
