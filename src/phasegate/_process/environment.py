"""Environment variables a process sets for itself alone, kept from the commands it starts.

The plugin's Stop hook turns pydantic's plugin loader off (``PYDANTIC_DISABLE_PLUGINS``: it
would scan every installed package's entry points at the first model) before pydantic loads,
and pydantic reads it from :data:`os.environ`. A check command the gate then runs is the
user's own (their tests may rely on a pydantic plugin), so it gets the environment as it was:
:func:`for_commands` is what every check command starts with.
"""

from __future__ import annotations

import os

_OWN: dict[str, str] = {}
# What this process set for itself: name -> the value it set.


def set_for_self(name: str, value: str) -> None:
    """Set ``name`` to ``value`` in this process's environment, unless it is set already
    (the user's own setting wins and is passed on); :func:`for_commands` leaves it out."""
    if name in os.environ:
        _OWN.pop(name, None)
        return
    os.environ[name] = value
    _OWN[name] = value


def for_commands() -> dict[str, str]:
    """The environment for a command this process starts: its own, without the variables
    :func:`set_for_self` set."""
    env = dict(os.environ)
    for name, value in _OWN.items():
        if env.get(name) == value:
            del env[name]
    return env
