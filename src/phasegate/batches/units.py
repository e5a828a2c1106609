"""A unit: one item of a batch in one mode, one repeat; the thing an executor runs.

A unit's id is derived from its content (the item, what the task or pipeline says, the work
directory source, the mode, the repeat, the model and the attempt budget), so the same batch
file names the same units every time it is read: results are found again on the next run,
and shards split the same set however often they are computed. Limits (timeout, cost cap)
are not part of the id: raising a limit does not make finished units new.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

from phasegate._files.digests import json_digest
from phasegate.batches.sources import WorkdirSource
from phasegate.modes import DefinitionKind, Isolation, Mode
from phasegate.phases.sandbox import Sandbox, SandboxMode, effective_sandbox

"""What a unit runs."""


class Unit(BaseModel):
    """One run of a batch: an item in one mode (tasks) and one repeat."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    id: str = Field(description="<item>.<mode or pipeline>.r<repeat>.<12 hex digits of content>")
    item: str = Field(description="The batch item's name.")
    kind: DefinitionKind
    name: str = Field(description="The task's or pipeline's own name, as its events carry it.")
    definition: str = Field(description="The task or pipeline file (absolute).")
    files_root: str | None = Field(default=None, description="Where its named files must lie.")
    mode: Mode | None = Field(default=None, description="The task's mode; null for pipelines.")
    isolation: Isolation | None = Field(default=None, description="Pipelines only.")
    repeat: int = Field(ge=1, description="Which repeat, from 1.")
    model: str | None = None
    max_attempts: int = Field(ge=1)
    timeout: float = Field(gt=0, description="Seconds the unit may take.")
    max_cost: float | None = Field(default=None, ge=0, description="USD the unit may cost.")
    record: bool = Field(
        default=False,
        description="Whether the unit's result holds its recording (not part "
        "of its id: a run setting, as its timeout).",
    )
    sandbox: Sandbox | None = Field(
        default=None,
        description="How the unit is confined, replacing its definition's own sandbox: (null: "
        "as the definition says). A run setting, as its timeout: not part of its id.",
        exclude_if=lambda sandbox: sandbox is None,
    )
    workdir: WorkdirSource
    model_script: str | None = Field(
        default=None, description="Replay this script with the offline scripted model server."
    )
    digest: str = Field(description="sha256 of what the task or pipeline says, as loaded.")

    def shard_of(self, count: int) -> int:
        """The shard (0 to ``count - 1``) this unit falls in when the batch is split ``count``
        ways: the same for every reader of the same batch file."""
        return int(self.id.rsplit(".", 1)[1], 16) % count


def unit_id(content: Mapping[str, object]) -> str:
    """The stable id of the unit with this content: at least ``item``, ``kind``, ``mode``
    and ``repeat``, plus whatever else defines the work. The work directory source goes in
    as the batch file states it, paths relative to the file, so the id does not depend on
    where the batch lives (the jobs of a CI matrix may check it out in different places)."""
    hexdigest = json_digest(content)[:12]  # 48 bits tell a batch's units apart
    return (
        f"{content['item']}.{content['mode'] or content['kind']}.r{content['repeat']}.{hexdigest}"
    )


def unit_sandbox(
    written: Sandbox | None, declared: Sandbox | None, override: SandboxMode | None
) -> Sandbox | None:
    """A unit's sandbox: what its batch item ``written`` (else its definition ``declared``),
    with the batch run's ``override`` mode; None when none of them says anything."""
    if written is None and override is None:
        return None
    return effective_sandbox(written if written is not None else declared, override)
