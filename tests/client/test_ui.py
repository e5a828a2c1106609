"""ui_page (phasegate._server.ui): the service's page, from the wheel or from the checkout."""

from __future__ import annotations

from pathlib import Path

import pytest

from phasegate.client import ui
from phasegate.errors import UsageError

CHECKOUT_PAGE = Path(__file__).resolve().parents[2] / "examples" / "server" / "index.html"


def test_in_a_checkout_the_page_is_the_one_of_examples_server() -> None:
    """An editable install has no bundled copy: the checkout's file is served."""
    assert ui.ui_page() == CHECKOUT_PAGE.read_bytes()
    assert ui.ui_page().startswith(b"<!doctype html>")


def test_an_installed_wheel_serves_its_bundled_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The wheel carries the page as phasegate/_examples/server/index.html; that one wins."""
    bundled = tmp_path / "_examples" / "server"
    bundled.mkdir(parents=True)
    (bundled / "index.html").write_bytes(b"<!doctype html><title>bundled</title>")
    monkeypatch.setattr("importlib.resources.files", lambda package: tmp_path)
    assert ui.ui_page() == b"<!doctype html><title>bundled</title>"


def test_a_missing_page_is_a_usage_error_that_says_to_reinstall(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Neither copy found: a clear error, not a traceback from open()."""
    monkeypatch.setattr("importlib.resources.files", lambda package: tmp_path)
    monkeypatch.setattr(ui, "__file__", str(tmp_path / "deep" / "ui.py"))
    with pytest.raises(UsageError, match="reinstall phasegate"):
        ui.ui_page()
