"""Reading the results of batch output directories (the shards of a matrix), for one report.

A batch output directory holds ``batch.json`` (the manifest: the units it plans) and
``units/<unit id>/`` for every finished unit (``unit.json``, ``events.jsonl``, ...). Results
are data written by runs on other machines, so nothing read here is trusted: a file that
cannot be read or does not have its shape is a warning naming it, and the rest is read on.
A unit whose results appear in more than one directory is counted once (the copy that
finished last). Everything collected is ordered by path and unit id, so the report does not
depend on the order the directories were named in (only the warnings do).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from phasegate._files.limits import MAX_FILE_BYTES, FileTooLargeError, describe_bytes, read_bounded
from phasegate.batches.units import Unit
from phasegate.errors import UsageError
from phasegate.metrics.aggregate import LogAggregator
from phasegate.metrics.reading import LogReader
from phasegate.modes import RECORDING_PAGE

MANIFEST = "batch.json"
UNITS = "units"
RECORD = "unit.json"
EVENTS = "events.jsonl"
RECORDING = "recording"
"""A unit's recording folder, when it recorded its run (``docs/recordings.md``)."""
MAX_MANIFEST_BYTES = 64 * 1024 * 1024
"""The largest manifest read (about 100,000 units)."""
_Model = TypeVar("_Model", bound=BaseModel)


class _Outcome(BaseModel):
    """The fields of a unit's outcome the report uses; others are ignored."""

    model_config = ConfigDict(extra="ignore")

    verdict: str
    cost_usd: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    model_requests: int | None = Field(default=None, ge=0)
    finished_at: str = ""


class _Record(BaseModel):
    """``unit.json``."""

    schema_version: Literal[1]
    unit: Unit
    outcome: _Outcome


class _Manifest(BaseModel):
    """``batch.json``."""

    schema_version: Literal[1]
    batch: str | None = None
    shard: str | None = None
    total_units: int | None = Field(default=None, ge=0)
    units: list[Unit]


@dataclass(frozen=True, slots=True)
class FinishedUnit:
    """A unit's result as read from ``units/<id>/``."""

    path: Path
    unit: Unit
    verdict: str
    cost_usd: float | None
    input_tokens: int
    output_tokens: int
    model_requests: int | None
    finished_at: str


@dataclass(slots=True)
class BatchDirectory:
    """One directory read: what its manifest says and how many results it holds."""

    path: str
    batch: str | None = None
    shard: str | None = None
    total_units: int | None = None
    planned: int = 0
    finished: int = 0


@dataclass(slots=True)
class CollectedBatch:
    """Every directory's plan and results, merged; ``warnings`` say what could not be read."""

    directories: list[BatchDirectory] = field(default_factory=list)
    planned: dict[str, Unit] = field(default_factory=dict)
    finished: dict[str, FinishedUnit] = field(default_factory=dict)
    duplicates: set[str] = field(default_factory=set)
    warnings: list[str] = field(default_factory=list)

    def aggregate(self, aggregator: LogAggregator) -> None:
        """Add every finished unit's run to ``aggregator``, in unit id order: from its events
        (a task's or a pipeline's: attempts, duration and the runs of a task's checks are only
        there; each unit is one task run, so a check's ``task_runs`` are units), or from its
        record when its events hold no finished run (it failed before one ended)."""
        for unit_id in sorted(self.finished):
            result = self.finished[unit_id]
            unit = result.unit
            before = aggregator.completed_runs()
            events = result.path / EVENTS
            if events.is_file():
                reader = LogReader([str(events)])
                try:
                    aggregator.add_lines(reader.lines())
                except UsageError as exc:
                    self.warnings.append(f"{events}: {exc}; counted from {RECORD}")
                self.warnings.extend(reader.warnings)
            if aggregator.completed_runs() == before:
                aggregator.add_run(
                    unit.name,
                    unit.mode or unit.isolation or unit.kind,
                    verdict=result.verdict,
                    input_tokens=result.input_tokens,
                    output_tokens=result.output_tokens,
                    cost_usd=result.cost_usd,
                )

    def recordings(self) -> list[dict[str, Any]]:
        """The finished units that recorded their run (``units/<id>/recording/``), in unit id
        order, as the report's ``recordings``: each unit's page is written when it is missing
        (a recording that cannot be read or a page that cannot be written is a warning, and
        the unit is not listed)."""
        from phasegate.errors import PhasegateError
        from phasegate.recording.page import write_page
        from phasegate.recording.reading import is_recording

        runs = []
        for unit_id in sorted(self.finished):
            result = self.finished[unit_id]
            folder = result.path / RECORDING
            if folder.is_symlink():
                self.warnings.append(f"{folder}: a symbolic link, not followed; no page")
                continue
            if not is_recording(folder):
                continue
            page = folder / RECORDING_PAGE
            if not page.is_file() or page.is_symlink():
                try:
                    page = write_page(folder)
                except (PhasegateError, OSError) as exc:
                    self.warnings.append(f"{folder}: no page: {exc}")
                    continue
            unit = result.unit
            runs.append({"run_id": unit_id, "task": unit.name,
                         "mode": unit.mode or unit.isolation or unit.kind,
                         "verdict": result.verdict, "recording": str(folder),
                         "page": str(page)})  # fmt: skip
        return runs

    def section(self) -> dict[str, Any]:
        """The batch section of the report (JSON-ready, every list sorted)."""
        results = [self.finished[unit_id] for unit_id in sorted(self.finished)]
        verdicts: dict[str, int] = {}
        for result in results:
            verdicts[result.verdict] = verdicts.get(result.verdict, 0) + 1
        costs = [r.cost_usd for r in results if r.cost_usd is not None]
        requests = [r.model_requests for r in results if r.model_requests is not None]
        totals = {d.total_units for d in self.directories if d.total_units is not None}
        return {
            "directories": [asdict(d) for d in sorted(self.directories, key=lambda d: d.path)],
            "total_units": max(totals) if totals else None,
            "planned": len(self.planned),
            "finished": len(self.finished),
            "missing": sorted(set(self.planned) - set(self.finished)),
            "unplanned": sorted(set(self.finished) - set(self.planned)),
            "verdicts": dict(sorted(verdicts.items())),
            "duplicates": sorted(self.duplicates),
            "cost_usd": round(math.fsum(costs), 6) if costs else None,
            "model_requests": sum(requests) if requests else None,
        }


def collect_batches(paths: Sequence[str | Path]) -> CollectedBatch:
    """Read the batch output directories ``paths``.

    Raises :class:`~phasegate.errors.UsageError` naming a path that is not a batch output
    directory (neither ``batch.json`` nor ``units/`` in it).
    """
    collected, seen = CollectedBatch(), set()
    for path in sorted((Path(p) for p in paths), key=str):
        if not (path / MANIFEST).is_file() and not (path / UNITS).is_dir():
            raise UsageError(
                f"{path} is not a batch output directory: it has neither {MANIFEST} nor "
                f"{UNITS}/; name the directory a batch run wrote its results to"
            )
        if (identity := path.resolve()) in seen:
            collected.warnings.append(f"{path}: named twice; read once")
            continue
        seen.add(identity)
        directory = BatchDirectory(path=str(path))
        collected.directories.append(directory)
        _read_manifest(path, directory, collected)
        for result in _read_units(path / UNITS, collected.warnings):
            directory.finished += 1
            _keep(result, collected)
    _check_totals(collected)
    return collected


def _read_manifest(path: Path, directory: BatchDirectory, collected: CollectedBatch) -> None:
    file = path / MANIFEST
    if not file.is_file():
        collected.warnings.append(f"{file}: missing; the units it planned are unknown")
        return
    manifest = _load(file, _Manifest, MAX_MANIFEST_BYTES, collected.warnings)
    if manifest is None:
        return
    directory.batch, directory.shard = manifest.batch, manifest.shard
    directory.total_units, directory.planned = manifest.total_units, len(manifest.units)
    for unit in manifest.units:
        collected.planned.setdefault(unit.id, unit)


def _read_units(units: Path, warnings: list[str]) -> Iterable[FinishedUnit]:
    """The finished units under ``units`` (a folder without ``unit.json`` is work in progress
    or debris, not a result; hidden folders such as ``.incoming`` are skipped)."""
    try:
        folders = sorted(units.iterdir()) if units.is_dir() else []
    except OSError as exc:
        warnings.append(f"{units}: cannot be listed ({exc.strerror or exc})")
        return
    for folder in folders:
        if folder.name.startswith(".") or not (folder / RECORD).is_file():
            continue
        record = _load(folder / RECORD, _Record, MAX_FILE_BYTES, warnings)
        if record is None:
            continue
        if record.unit.id != folder.name:
            warnings.append(
                f"{folder / RECORD}: unit.id is {record.unit.id!r}, not its folder's name; skipped"
            )
            continue
        outcome = record.outcome
        yield FinishedUnit(
            path=folder,
            unit=record.unit,
            verdict=outcome.verdict,
            cost_usd=outcome.cost_usd,
            input_tokens=outcome.input_tokens,
            output_tokens=outcome.output_tokens,
            model_requests=outcome.model_requests,
            finished_at=outcome.finished_at,
        )


def _load(file: Path, model: type[_Model], limit: int, warnings: list[str]) -> _Model | None:
    """``file`` parsed as ``model``, or None with a warning saying why not."""
    try:
        data = read_bounded(file, limit)
    except OSError as exc:
        warnings.append(f"{file}: cannot be read ({exc.strerror or exc}); skipped")
        return None
    except FileTooLargeError:
        warnings.append(f"{file}: larger than {describe_bytes(limit)}; skipped")
        return None
    try:
        return model.model_validate_json(data)
    except ValidationError as exc:
        problem = exc.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(part) for part in problem["loc"]) or "the file"
        warnings.append(f"{file}: {where}: {problem['msg']}; skipped")
        return None


def _keep(result: FinishedUnit, collected: CollectedBatch) -> None:
    """Keep ``result`` unless a copy of the same unit that finished later is kept already."""
    unit_id = result.unit.id
    other = collected.finished.get(unit_id)
    if other is None:
        collected.finished[unit_id] = result
        return
    collected.duplicates.add(unit_id)
    newer, older = sorted((other, result), key=lambda r: (r.finished_at, str(r.path)))[::-1]
    collected.finished[unit_id] = newer
    collected.warnings.append(
        f"unit {unit_id} has results in {older.path} and {newer.path}; "
        f"kept {newer.path} (it finished last)"
    )


def _check_totals(collected: CollectedBatch) -> None:
    """Warn when the manifests disagree on the batch, or plan fewer units than it has."""
    names = sorted({d.batch for d in collected.directories if d.batch is not None})
    if len(names) > 1:
        collected.warnings.append(f"the directories hold different batches: {', '.join(names)}")
    totals = [d.total_units for d in collected.directories if d.total_units is not None]
    if totals and len(collected.planned) < max(totals):
        collected.warnings.append(
            f"the manifests plan {len(collected.planned)} of the batch's {max(totals)} units: "
            "the directory of a shard may be missing"
        )
