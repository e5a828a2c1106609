"""Loading a batch file: paths resolved and checked, globs expanded, items into units.

Everything a run needs is checked here, before any unit starts: a task or pipeline that
does not load, a work directory or model script that is not there, two items with one name.
Each problem is a :class:`~phasegate.errors.BatchFileError` naming the file and the field.
"""

from __future__ import annotations

import glob
import hashlib
from dataclasses import dataclass
from pathlib import Path

from phasegate._files import ParseProblem, read_bounded, read_mapping, validate_model
from phasegate._files.portable import windows_device
from phasegate.batches.model import DEFAULT_TIMEOUT, BatchFile, BatchItem, ItemSettings
from phasegate.batches.outcome import AgentFactory, UnitJob
from phasegate.batches.sources import WorkdirSource, resolve_source
from phasegate.batches.units import Unit, unit_id, unit_sandbox
from phasegate.errors import BatchFileError, UsageError
from phasegate.modes import DEFAULT_MAX_ATTEMPTS
from phasegate.phases.conditions import applicability
from phasegate.phases.loading import load_task
from phasegate.phases.model import Task
from phasegate.phases.pipeline import Pipeline, load_pipeline
from phasegate.phases.sandbox import SandboxMode

_GLOB_CHARACTERS = frozenset("*?[")


@dataclass(frozen=True, slots=True)
class Batch:
    """A loaded batch: its units, in file order (item, mode, repeat), and what they run."""

    name: str
    path: Path
    units: tuple[Unit, ...]
    definitions: dict[str, Task | Pipeline]
    """Each item's task or pipeline, by item name."""

    def job(self, unit: Unit, agents: AgentFactory) -> UnitJob:
        """What an executor runs for ``unit``."""
        return UnitJob(unit=unit, definition=self.definitions[unit.item], agents=agents)

    def shard(self, index: int, count: int) -> tuple[Unit, ...]:
        """The units of shard ``index`` (1 to ``count``): every unit is in exactly one."""
        return tuple(unit for unit in self.units if unit.shard_of(count) == index - 1)


def load_batch(
    path: str | Path,
    *,
    model_script: str | Path | None = None,
    sandbox: SandboxMode | None = None,
    max_parallel: int | None = None,
) -> Batch:
    """Read and check a batch file (YAML or JSON) and expand it into units.

    ``model_script``: items that name no model script (nor their defaults) replay this one
    with phasegate's offline scripted model. ``sandbox``: every unit confined (``on``,
    ``optional``) or not (``off``), whatever the file and the definitions say.
    ``max_parallel``: every pipeline runs at most this many stages at once, whatever its
    ``max_parallel`` says (a unit's id does not depend on it: it changes no result).
    """
    if max_parallel is not None and max_parallel < 1:
        raise UsageError(f"max_parallel must be at least 1, not {max_parallel}")
    file = Path(path)
    written = validate_model(BatchFile, read_mapping(file, BatchFileError), path=file,
                             error=BatchFileError)  # fmt: skip
    base = file.parent
    units: list[Unit] = []
    definitions: dict[str, Task | Pipeline] = {}
    for index, item in enumerate(written.items):
        for name, definition_file in _definition_files(file, index, item):
            if name in definitions:
                raise BatchFileError(
                    file, f"items.{index}", f"a second item is named {name!r}; give it a name:"
                )
            settings = _merged(written.defaults, item)
            if settings.model_script is None and model_script is not None:
                settings = settings.model_copy(update={"model_script": str(Path(model_script))})
            loader = _Loader(file, index, settings, base, sandbox)
            definition = loader.definition(item, definition_file)
            definitions[name] = definition
            units.extend(loader.units(name, definition_file, definition))
            if isinstance(definition, Pipeline) and max_parallel is not None:
                definitions[name] = definition.model_copy(update={"max_parallel": max_parallel})
    return Batch(
        name=written.name or file.stem,
        path=file.resolve(),
        units=tuple(units),
        definitions=definitions,
    )


def _merged(defaults: ItemSettings, item: BatchItem) -> BatchItem:
    """``item`` with every setting it leaves unset taken from ``defaults``."""
    inherited = {
        key: value for key, value in defaults if value is not None and getattr(item, key) is None
    }
    return item.model_copy(update=inherited)


def _definition_files(file: Path, index: int, item: BatchItem) -> list[tuple[str, Path]]:
    """(item name, file) for the item: one, or one per file a glob matches."""
    written = item.task if item.task is not None else item.pipeline
    assert written is not None  # the model requires one of them
    field = f"items.{index}.{'task' if item.task is not None else 'pipeline'}"
    if _GLOB_CHARACTERS.isdisjoint(written):
        found = file.parent / written
        if not found.is_file():
            raise BatchFileError(file, field, f"{found} is not a file")
        return [(item.name or _name_of(found), found)]
    matches = sorted(Path(match) for match in glob.glob(str(file.parent / written)))
    files = [match for match in matches if match.is_file()]
    if not files:
        raise BatchFileError(file, field, f"the glob {written!r} matches no file")
    if item.name is not None and len(files) > 1:
        raise BatchFileError(
            file, f"items.{index}.name", "one name cannot serve the several files a glob matches"
        )
    return [(item.name or _name_of(match), match) for match in files]


def _name_of(definition: Path) -> str:
    """An item's default name: the file's stem, or its folder's for task.yaml/pipeline.yaml,
    with characters an id cannot hold replaced by ``-``."""
    stem = definition.stem
    if stem in ("task", "pipeline"):
        stem = definition.resolve().parent.name
    cleaned = "".join(c if (c.isalnum() and c.isascii()) or c in "_-" else "-" for c in stem)
    if windows_device(cleaned):  # nul.yaml: a unit folder Windows could not hold
        cleaned = f"{cleaned}-item"
    return cleaned[:64] or "item"


class _Loader:
    """One item's settings, resolved against the batch file."""

    def __init__(
        self, file: Path, index: int, item: BatchItem, base: Path, sandbox: SandboxMode | None
    ) -> None:
        self.file, self.index, self.item, self.base = file, index, item, base
        self.sandbox = sandbox

    def definition(self, item: BatchItem, path: Path) -> Task | Pipeline:
        loaded = load_task(path) if item.task is not None else load_pipeline(path)
        inputs = loaded.all_inputs
        defaults = {i.id: i.default for i in inputs if i.default is not None}
        unasked = applicability(inputs, defaults).not_applicable  # their ask_when fails
        needed = [i.id for i in inputs if i.required and i.default is None and i.id not in unasked]
        if needed:
            # A unit runs unattended: nothing would give these values, and every unit
            # would fail the same way after its work directory was set up.
            raise BatchFileError(
                self.file, f"items.{self.index}",
                f"{path.name} declares required inputs without a default ({', '.join(needed)}), "
                "which a batch cannot give; give each a default, or run it with its values "
                "from Python or over HTTP:",
            )  # fmt: skip
        return loaded

    def units(self, name: str, path: Path, definition: Task | Pipeline) -> list[Unit]:
        item = self.item
        workdir, written = self._workdir()
        script = self._model_script()
        kind, digest = definition.kind, definition.digest()
        modes = (item.modes or ("gate",)) if kind == "task" else (None,)
        isolation = (item.isolation or "session") if kind == "pipeline" else None
        max_attempts = item.max_attempts or DEFAULT_MAX_ATTEMPTS
        script_digest = self._sha256(script) if script is not None else None
        units = []
        for mode in modes:
            for repeat in range(1, (item.repeats or 1) + 1):
                identity = unit_id({
                    "item": name, "kind": kind, "digest": digest, "workdir": written,
                    "mode": mode, "isolation": isolation, "repeat": repeat, "model": item.model,
                    "max_attempts": max_attempts, "model_script": script_digest,
                })  # fmt: skip
                unit = Unit(
                    id=identity, item=name, kind=kind, digest=digest, isolation=isolation,
                    model=item.model, max_attempts=max_attempts, name=definition.name,
                    definition=str(path.resolve()),
                    mode=mode, repeat=repeat, timeout=item.timeout or DEFAULT_TIMEOUT,
                    max_cost=item.max_cost, workdir=workdir, record=bool(item.record),
                    sandbox=unit_sandbox(item.sandbox, definition.sandbox, self.sandbox),
                    model_script=str(script) if script is not None else None,
                )  # fmt: skip
                units.append(unit)
        return units

    def _workdir(self) -> tuple[WorkdirSource, dict[str, str]]:
        field = f"items.{self.index}.workdir"
        if self.item.workdir is None:
            raise BatchFileError(
                self.file,
                field,
                "is required (here or in defaults:): a directory to copy, or {git: URL, ref: REF}",
            )
        try:
            return resolve_source(self.item.workdir, self.base)
        except ValueError as exc:
            raise BatchFileError(self.file, field, str(exc)) from None

    def _model_script(self) -> Path | None:
        if self.item.model_script is None:
            return None
        script = (self.base / self.item.model_script).resolve()
        if not script.is_file():
            raise BatchFileError(
                self.file, f"items.{self.index}.model_script", f"{script} is not a file"
            )
        return script

    def _sha256(self, script: Path) -> str:
        """The model script's digest, read as any file phasegate reads (bounded, regular)."""
        try:
            return hashlib.sha256(read_bounded(script)).hexdigest()
        except (OSError, ParseProblem) as exc:
            problem = exc.strerror if isinstance(exc, OSError) else str(exc)
            raise BatchFileError(
                self.file, f"items.{self.index}.model_script", f"{script} {problem or exc}"
            ) from None
