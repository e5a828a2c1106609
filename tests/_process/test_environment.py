"""Variables a process sets for itself alone (phasegate._process.environment): set unless the
user set them, and left out of the environment of the commands it starts."""

from __future__ import annotations

import os

import pytest

from phasegate._process import environment


@pytest.fixture(autouse=True)
def _nothing_set_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(environment, "_OWN", {})
    monkeypatch.delenv("PHASEGATE_TEST_OWN", raising=False)


def test_a_variable_set_for_self_is_in_the_process_but_not_in_a_commands_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PHASEGATE_TEST_KEPT", "yes")
    environment.set_for_self("PHASEGATE_TEST_OWN", "__all__")
    try:
        assert os.environ["PHASEGATE_TEST_OWN"] == "__all__"
        env = environment.for_commands()
    finally:
        del os.environ["PHASEGATE_TEST_OWN"]
    assert "PHASEGATE_TEST_OWN" not in env
    assert env["PHASEGATE_TEST_KEPT"] == "yes"


def test_the_users_own_setting_wins_and_is_passed_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PHASEGATE_TEST_OWN", "1")
    environment.set_for_self("PHASEGATE_TEST_OWN", "__all__")
    assert os.environ["PHASEGATE_TEST_OWN"] == "1"
    assert environment.for_commands()["PHASEGATE_TEST_OWN"] == "1"
