"""Batch output directories as ``batch run`` lays them down, with real unit results.

Each unit runs the example task through phasegate's own unit runner (``run_unit``, a fresh
copy of the example project, the runner, an event log) with the in-process scripted agent, so
``events.jsonl``, ``report.json`` and ``transcript.json`` are what a real unit writes; the
helper only writes them where the batch runner would (``units/<id>/``) and the manifest.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

from phasegate.batches.outcome import UnitAgent, UnitJob, UnitOutcome
from phasegate.batches.sources import CopySource
from phasegate.batches.unit_run import run_unit_blocking
from phasegate.batches.units import Unit, unit_id
from phasegate.modes import Mode
from phasegate.phases.loading import load_task
from phasegate.testing import Script, ScriptedAgent, load_script
from tests.helpers.scenarios import EDIT, EXAMPLE, GOOD_JSON, MARKER

LAZY = load_script(EXAMPLE / "model.yaml")
"""Claims the fix without making it, edits only after the gate's feedback: accepted in gate
mode (2 checks), rejected in single-query and unstructured modes."""
GOOD = Script.model_validate(
    {"replies": [{"text": "Fixing it.", "tools": [EDIT]},
                 {"when": "tool_result", "text": f"{MARKER}\n\n{GOOD_JSON}"}]}
)  # fmt: skip
"""Edits at once, then claims and reports: accepted in every mode."""


def make_unit(
    item: str, mode: Mode, repeat: int, *, task: str = "fix-vulnerability", example: Path = EXAMPLE
) -> Unit:
    """A unit of the example task (``task`` is the name its events carry); ``example``: the
    folder of another example (its ``task.yaml`` and ``project/``)."""
    workdir = {"copy": "project"}
    digest = hashlib.sha256(f"{item}/{task}".encode()).hexdigest()
    return Unit(
        id=unit_id({"item": item, "kind": "task", "digest": digest, "workdir": workdir,
                    "mode": mode, "repeat": repeat}),
        item=item, kind="task", name=task, definition=str(example / "task.yaml"), mode=mode,
        repeat=repeat, max_attempts=3, timeout=60,
        workdir=CopySource.model_validate({"copy": str(example / "project")}), digest=digest,
    )  # fmt: skip


@dataclasses.dataclass(frozen=True, slots=True)
class _Scripted:
    """The agent factory of these units: the scripted agent, in this process."""

    script: Script

    def __call__(self, unit: Unit, stack: object) -> UnitAgent:
        return UnitAgent(ScriptedAgent(self.script), model_requests=lambda: 2)


def run_into(
    out: Path,
    unit: Unit,
    script: Script,
    *,
    cost_usd: float | None = None,
    finished_at: str | None = None,
) -> UnitOutcome:
    """Run ``unit`` with ``script`` and write its result under ``out/units/<id>/``.

    ``cost_usd`` bills the unit's record as a paid agent would (the scripted agent reports
    none); ``finished_at`` replaces the record's finishing time.
    """
    task = load_task(unit.definition)
    if unit.name != task.name:
        task = task.model_copy(update={"name": unit.name})
    outcome = run_unit_blocking(UnitJob(unit=unit, definition=task, agents=_Scripted(script)))
    changes: dict[str, object] = {}
    if cost_usd is not None:
        changes["cost_usd"] = cost_usd
    if finished_at is not None:
        changes["finished_at"] = finished_at
    outcome = dataclasses.replace(outcome, **changes)  # type: ignore[arg-type]  # test data
    folder = out / "units" / unit.id
    folder.mkdir(parents=True)
    (folder / "unit.json").write_text(json.dumps(outcome.record(), indent=2))
    for name, content in outcome.files.items():
        (folder / name).write_bytes(content)
    return outcome


def write_manifest(
    out: Path,
    units: Iterable[Unit],
    *,
    shard: str | None = None,
    total_units: int | None = None,
    batch: str = "examples",
) -> None:
    """``out/batch.json`` planning ``units``."""
    planned = [unit.model_dump(mode="json", by_alias=True) for unit in units]
    manifest = {"schema_version": 1, "batch": batch, "file": "/batches/examples.yaml",
                "shard": shard, "total_units": total_units or len(planned),
                "units": planned}  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    (out / "batch.json").write_text(json.dumps(manifest, indent=2))
