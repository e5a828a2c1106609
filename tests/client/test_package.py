"""The package phasegate.client: its public names, and httpx only when the client is used."""

from __future__ import annotations

import importlib
import sys

import pytest

import phasegate
import phasegate.client


def test_the_public_names_are_exactly_all_sorted_and_resolve() -> None:
    """__all__ is sorted and each name resolves."""
    assert phasegate.client.__all__ == ["ServiceClient", "ServiceError", "ServiceEvent"]
    for name in phasegate.client.__all__:
        assert getattr(phasegate.client, name).__name__ == name


def test_without_httpx_the_package_imports_and_the_client_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Importing the package, its errors and events needs no httpx; touching ServiceClient
    raises an ImportError that says which extra to install."""
    monkeypatch.setattr(phasegate, "client", phasegate.client)  # restored after the test
    monkeypatch.setitem(sys.modules, "httpx", None)  # `import httpx` now fails
    for name in [name for name in sys.modules if name.startswith("phasegate.client")]:
        monkeypatch.delitem(sys.modules, name)
    package = importlib.import_module("phasegate.client")
    assert package.ServiceError.__name__ == "ServiceError"
    assert package.ServiceEvent.__name__ == "ServiceEvent"
    with pytest.raises(ImportError, match=r"pip install 'phasegate\[client\]'"):
        package.ServiceClient  # noqa: B018 - the attribute access is what imports the client
