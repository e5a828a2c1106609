"""The batch file as written: items, each a task or a pipeline, and defaults they inherit.

Paths are kept as written here; :mod:`.loading` resolves them against the batch file's
folder, checks that they exist and expands the items into units.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    model_validator,
)

from phasegate._files import Number, WholeNumber
from phasegate._files.portable import windows_device
from phasegate.batches.sources import CopySource, GitSource
from phasegate.modes import Isolation, Mode
from phasegate.phases.sandbox import Sandbox


def _no_device(name: str) -> str:
    if windows_device(name):
        raise ValueError(
            f"{name!r} is a name Windows keeps for a device, and it begins every unit's folder "
            f"of the item, which Windows could not hold; choose another, such as {name}-item"
        )
    return name


ItemName = Annotated[
    str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{1,64}$"), AfterValidator(_no_device)
]
"""An item's name: letters, digits, ``_`` and ``-`` (it is part of every unit id and path),
never a name Windows keeps for a device (``con``, ``nul``, ``com1``)."""

DEFAULT_TIMEOUT = 1800.0
"""Seconds a unit may take unless the batch file says otherwise."""


class ItemSettings(BaseModel):
    """What an item may set, and ``defaults`` sets for every item that does not."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    modes: tuple[Mode, ...] | None = Field(
        default=None, min_length=1, description="Task modes to run (default: gate)."
    )
    repeats: WholeNumber | None = Field(default=None, ge=1, le=10_000, description="Runs per mode.")
    model: str | None = None
    timeout: Number | None = Field(default=None, gt=0, description="Seconds per unit.")
    max_cost: Number | None = Field(default=None, ge=0, description="USD per unit.")
    max_attempts: WholeNumber | None = Field(default=None, ge=1, description="Gate checks per run.")
    workdir: str | CopySource | GitSource | None = Field(
        default=None, description="A directory to copy (a path, or {copy: ...}), or {git, ref}."
    )
    model_script: str | None = Field(
        default=None, description="Replay this script with phasegate's offline scripted model."
    )
    isolation: Isolation | None = Field(default=None, description="Pipelines only.")
    sandbox: Sandbox | None = Field(
        default=None,
        description="Confine the agent (docs/sandbox.md): replaces the task's or pipeline's "
        "own sandbox: (on, off, optional, or {mode, network: [hosts]}).",
    )
    record: bool | None = Field(
        default=None,
        description="Write each unit's recording (docs/recordings.md) into its result folder, "
        "as recording/ (default: no).",
    )


class BatchItem(ItemSettings):
    """One entry of ``items``: a task file (or a glob of them) or a pipeline file."""

    task: str | None = Field(default=None, description="A task file, or a glob of task files.")
    pipeline: str | None = Field(default=None, description="A pipeline file.")
    name: ItemName | None = Field(
        default=None,
        description="Default: the file's name without suffix (its folder's name "
        "when that is task or pipeline).",
    )

    @model_validator(mode="after")
    def _one_definition(self) -> BatchItem:
        if (self.task is None) == (self.pipeline is None):
            raise ValueError("give exactly one of task: or pipeline:")
        if self.pipeline is not None and self.modes is not None:
            raise ValueError("modes: are for tasks; a pipeline item may set isolation:")
        if self.task is not None and self.isolation is not None:
            raise ValueError("isolation: is for pipelines; a task item may set modes:")
        return self


class BatchFile(BaseModel):
    """A whole batch file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: ItemName | None = Field(default=None, description="Default: the file's stem.")
    defaults: ItemSettings = Field(default_factory=ItemSettings)
    items: tuple[BatchItem, ...] = Field(min_length=1)
