"""The phasegate version the plugin launcher compares with the plugin's (major.minor).

Read from the installed distribution, or, for the plugin's own copy (run from its ``src/``
with no distribution installed), from the ``pyproject.toml`` next to it.
"""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path


def _version() -> str:
    pyproject = Path(__file__).resolve().parents[3] / "pyproject.toml"
    try:
        found = re.search(r'(?m)^version = "([^"]+)"', pyproject.read_text(encoding="utf-8"))
    except OSError:
        found = None
    if found is not None:  # a source tree: its own version, even when another is installed
        return found.group(1)
    try:
        return importlib.metadata.version("phasegate")
    except importlib.metadata.PackageNotFoundError:
        return "0"


VERSION = _version()
"""This phasegate's version (``0.1.0``)."""
