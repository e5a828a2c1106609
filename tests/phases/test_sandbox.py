"""``sandbox:`` in a definition: a word or a mapping, checked when the file loads, and the
one rule of which setting wins (the caller's switch, the file, the surface's default)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from phasegate.phases.model import Task
from phasegate.phases.sandbox import Sandbox, effective_sandbox

PHASES = [{"name": "work", "instructions": "Work."}]


def _task(**fields: Any) -> Task:
    return Task.model_validate({"name": "t", "phases": PHASES, **fields})


@pytest.mark.parametrize(
    ("written", "mode"),
    [(True, "on"), (False, "off"), ("on", "on"), ("OFF", "off"), ("optional", "optional"),
     ({"mode": True}, "on"), ({"mode": "optional", "network": []}, "optional"), ({}, "on")],
)  # fmt: skip
def test_a_word_or_a_mapping_names_the_mode(written: object, mode: str) -> None:
    """YAML reads ``on`` and ``off`` as booleans: they mean what they say."""
    task = _task(sandbox=written)
    assert task.sandbox is not None and task.sandbox.mode == mode


def test_the_hosts_are_kept_as_written() -> None:
    task = _task(sandbox={"mode": "on", "network": ["pypi.org", "*.github.com", "127.0.0.1"]})
    assert task.sandbox == Sandbox(mode="on", network=("pypi.org", "*.github.com", "127.0.0.1"))


@pytest.mark.parametrize(
    ("written", "said"),
    [("maybe", "sandbox must be on, off or optional"),
     ({"mode": "maybe"}, "mode"),
     ({"network": ["https://pypi.org"]}, "is not a host"),
     ({"network": ["pypi.org:443"]}, "no scheme, port or path"),
     ({"network": "pypi.org"}, "network"),
     ({"hosts": ["pypi.org"]}, "hosts")],
)  # fmt: skip
def test_anything_else_is_refused_naming_what_is_wrong(written: object, said: str) -> None:
    with pytest.raises(ValidationError, match="sandbox") as raised:
        _task(sandbox=written)
    assert said in str(raised.value)


def test_a_task_without_sandbox_dumps_and_digests_as_before() -> None:
    assert "sandbox" not in _task().model_dump()
    assert _task().digest() == _task(sandbox=None).digest()
    assert _task().digest() != _task(sandbox="on").digest()


def test_the_callers_switch_wins_over_the_file_and_keeps_its_hosts() -> None:
    declared = Sandbox(mode="optional", network=("pypi.org",))
    assert effective_sandbox(declared, "on") == Sandbox(mode="on", network=("pypi.org",))
    assert effective_sandbox(declared, None, "off") == declared
    assert effective_sandbox(None, None, "optional") == Sandbox(mode="optional")
    assert effective_sandbox(None, "off", "optional").mode == "off"
    assert not Sandbox(mode="off").confined and Sandbox(mode="optional").confined
