"""What confines the agent: the ``sandbox:`` of a task, a pipeline or a batch (docs/sandbox.md).

``sandbox: on`` runs every shell command of the agent (and what it starts) in the runtime's
operating-system sandbox (Claude Code: bubblewrap on Linux, Seatbelt on macOS): the work
directory is writable, nothing else is, the paths ``protect`` names are read-only there too,
and the network is closed except to the hosts ``network:`` lists. The file-writing tools
(Edit, Write, ...) are refused outside the work directory before they run. ``optional`` does
the same where the sandbox can run and runs unconfined (and says so in the report) where it
cannot; ``off`` does not confine. The model's own API is never affected.

Written as a word (``sandbox: on``; YAML's ``on``/``off``/``true``/``false`` all mean what
they say) or as a mapping (``sandbox: {mode: on, network: [pypi.org]}``). Not written, the
surface's default applies (:data:`SURFACE_DEFAULTS`). This module only describes the
setting; the agent adapter turns it into its runtime's settings.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

SandboxMode = Literal["off", "on", "optional"]
"""``on``: confined, and a run that cannot be confined does not start; ``optional``: confined
where the sandbox can run, unconfined (reported) where it cannot; ``off``: not confined."""

_HOST = re.compile(r"(\*\.)?[A-Za-z0-9][A-Za-z0-9-]{0,62}(\.[A-Za-z0-9][A-Za-z0-9-]{0,62})*")


def _a_host(value: str) -> str:
    if len(value) > 253 or not _HOST.fullmatch(value):
        raise ValueError(
            f"{value[:80]!r} is not a host: write a name like pypi.org or *.github.com "
            "(no scheme, port or path)"
        )
    return value


Domain = Annotated[str, AfterValidator(_a_host)]
"""A host the sandboxed commands may reach: ``pypi.org``, ``*.github.com``, ``127.0.0.1``."""

SURFACE_DEFAULTS: dict[str, SandboxMode] = {
    "command line": "off",
    "python": "off",
    "batch": "off",
    "serve": "optional",
    "action": "optional",
}
"""The mode a run takes when neither its file nor its caller says (docs/sandbox.md says why):
opt-in where a person starts the run on their own machine, on where the runs come from
elsewhere (the HTTP service, GitHub) and the machine can confine them."""

_WORDS: dict[object, SandboxMode] = {
    True: "on",
    False: "off",
    "on": "on",
    "off": "off",
    "true": "on",
    "false": "off",
    "optional": "optional",
}


class Sandbox(BaseModel):
    """How the agent is confined: ``mode`` and the hosts its commands may reach."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: SandboxMode = Field(
        default="on",
        description="on: confined, or the run does not start; optional: confined where the "
        "sandbox can run, else unconfined and reported; off: not confined.",
    )
    network: tuple[Domain, ...] = Field(
        default=(),
        max_length=200,
        description="Hosts the agent's commands may reach (pypi.org, *.github.com); none: no "
        "network. The model's API is reached whatever this says.",
    )

    @model_validator(mode="before")
    @classmethod
    def _from_a_word(cls, value: Any) -> Any:
        if isinstance(value, bool | str):
            word = value.strip().lower() if isinstance(value, str) else value
            if word not in _WORDS:
                raise ValueError(
                    f"sandbox must be on, off or optional (or a mapping with mode: and "
                    f"network:), not {value!r}"
                )
            return {"mode": _WORDS[word]}
        if isinstance(value, dict) and isinstance(value.get("mode"), bool | str):
            mode = value["mode"]
            word = mode.strip().lower() if isinstance(mode, str) else mode
            if word in _WORDS:
                return {**value, "mode": _WORDS[word]}
        return value

    @property
    def confined(self) -> bool:
        """Whether the agent is to be confined (``on`` or ``optional``)."""
        return self.mode != "off"


class SandboxOutcome(BaseModel):
    """How a run was confined, in its report: the ``mode`` asked for, whether the agent's
    commands ran in the sandbox (``confined``), and why not when ``optional`` could not."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: SandboxMode
    confined: bool
    network: tuple[str, ...] = ()
    unavailable: str | None = Field(
        default=None, description="Why an optional sandbox did not run (the run was unconfined)."
    )


def effective_sandbox(
    declared: Sandbox | None, override: SandboxMode | None, default: SandboxMode = "off"
) -> Sandbox:
    """The sandbox a run gets: ``override`` (the caller's switch) over what the definition
    ``declared``, over the surface's ``default``; the declared hosts stay either way."""
    base = declared if declared is not None else Sandbox(mode=default)
    if override is None:
        return base
    return base.model_copy(update={"mode": override})
