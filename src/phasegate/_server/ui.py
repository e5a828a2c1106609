"""The service's browser page (``GET /ui``): a file of the package, found where it is installed.

An installed wheel carries ``examples/server/index.html`` as ``phasegate/_examples/server``;
an editable install reads it from the checkout's ``examples/server/``.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from phasegate.errors import UsageError

_PAGE = ("server", "index.html")


def ui_page() -> bytes:
    """The page's bytes: one self-contained HTML document, no external resources."""
    bundled = resources.files("phasegate").joinpath("_examples", *_PAGE)
    if bundled.is_file():
        return bundled.read_bytes()
    # An editable install: the examples sit at the root of the checkout, above src/.
    for folder in Path(__file__).resolve().parents:
        page = folder.joinpath("examples", *_PAGE)
        if page.is_file():
            return page.read_bytes()
    raise UsageError(
        "the service's page examples/server/index.html is missing; reinstall phasegate"
    )
