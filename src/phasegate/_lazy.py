"""Lazy packages (PEP 562) whose public names are declared once, in their ``__init__.pyi``.

``phasegate``, ``phasegate.testing`` and ``phasegate.client`` list their public API in a stub
file next to their ``__init__.py``, one ``from module import Name as Name`` per name (the
explicit re-export form type checkers read). That list is the only declaration: the package's
``__all__``, its ``__getattr__`` (a name is imported from its module on first use) and its
``__dir__`` are read from it here, so importing the package (the CLI starting, the pytest
plugin loading in every pytest session) costs nothing until a name is touched.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from typing import Any


def public_names(init_file: str) -> dict[str, str]:
    """The public names the stub next to ``init_file`` declares, each with its module.

    Only ``from module import Name as Name`` counts (on one line, or wrapped in parentheses);
    anything else in the stub (its docstring,
    ``from __future__``) declares nothing.
    """
    # Split lines, not ast, re or pathlib: those would add 10-25 ms to every
    # `import phasegate`; tests/test_public_api.py checks the stub holds nothing but these.
    # A line too long for the formatter is wrapped in parentheses: `from M import (`, then
    # `Name as Name,` on its own line, then `)`.
    where: dict[str, str] = {}
    wrapped: str | None = None
    with open(os.path.splitext(init_file)[0] + ".pyi", encoding="utf-8") as stub:
        for line in stub:
            words = line.replace(",", " ").split()
            if wrapped is not None:
                if words == [")"]:
                    wrapped = None
                elif len(words) == 3 and words[1] == "as" and words[0] == words[2]:
                    where[words[0]] = wrapped
            elif len(words) == 4 and words[::2] == ["from", "import"] and words[3] == "(":
                wrapped = words[1]
            elif (
                len(words) == 6 and words[::2] == ["from", "import", "as"] and words[3] == words[5]
            ):
                where[words[3]] = words[1]
    return where


def lazy_attributes(
    package: str, init_file: str
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``__getattr__``, ``__dir__`` and ``__all__`` for ``package``, whose ``__init__.py`` is
    ``init_file``; its public names are those :func:`public_names` reads."""
    where = public_names(init_file)

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)  # later lookups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *where})

    return __getattr__, __dir__, sorted(where)
