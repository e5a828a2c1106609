# The public API of this package, declared once: each `from M import Name as Name` below is
# a public name, read by phasegate._lazy for __all__ and the lazy imports (see __init__.py).

from phasegate.client.client import ServiceClient as ServiceClient
from phasegate.client.errors import ServiceError as ServiceError
from phasegate.client.events import ServiceEvent as ServiceEvent

__all__: list[str]
