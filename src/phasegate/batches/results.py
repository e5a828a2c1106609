"""A batch's output directory: each finished unit's result, whole or not at all.

A result is a directory ``units/<id>/`` made complete under ``units/.incoming/`` and renamed
into place, so a crash at any moment leaves every result either finished or absent; an
absent result is simply run again. One batch process writes a directory at a time (a lock
file says so). An accepted result is never replaced.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from phasegate._files.atomic import fsync_directory, write_atomic, write_synced
from phasegate._files.confined import inside_folder, open_lock, remove_inside
from phasegate._files.limits import read_bounded
from phasegate._files.portable import lock_exclusive
from phasegate.batches.collect import UNITS
from phasegate.batches.outcome import RESULTS_VERSION, UnitOutcome
from phasegate.batches.units import Unit
from phasegate.errors import LinkedPathError, PhasegateError, UsageError

INCOMING = ".incoming"
"""Where a result is made before it is renamed into ``units/``."""


class ResultStore:
    """The results under ``out``: which units are finished, and writing a new one.

    ``out`` is taken as named; ``units/`` and ``units/.incoming/`` below it must be real
    folders, never symbolic links (:func:`~phasegate._files.confined.inside_folder`): a
    results folder may come from another job as an artifact, and a link there must not send
    results, or the removal of leftovers, out of it.
    """

    def __init__(self, out: str | Path) -> None:
        self.out = Path(out)
        self.units_dir = self.out / UNITS
        self._incoming = self.units_dir / INCOMING

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the directory's lock; refuse when another batch process holds it, and refuse
        a ``units/`` or ``units/.incoming/`` that is a link (a LinkedPathError)."""
        try:
            self.out.mkdir(parents=True, exist_ok=True)
            inside_folder(self.out, f"{UNITS}/{INCOMING}")
            lock = open_lock(self.out / ".lock")
        except LinkedPathError as exc:
            raise LinkedPathError(exc.root, exc.problem, option="out") from None
        except OSError as exc:
            raise UsageError(
                f"cannot write to {self.out}: {exc.strerror or exc}", option="out"
            ) from None
        with lock:
            try:
                lock_exclusive(lock.fileno(), wait=False)
            except BlockingIOError:
                raise UsageError(
                    f"another batch run is writing to {self.out}; wait for it to end, or "
                    "choose another output directory",
                    option="out",
                ) from None
            # Left by a process that died mid-write: never a result, safe to drop. Removed
            # from a descriptor of the folder: a link in it goes, what it points at stays.
            for leftover in sorted(os.listdir(self._incoming)):
                remove_inside(self._incoming, leftover)
            yield

    def verdicts(self) -> dict[str, str]:
        """The verdict of every finished unit, by id (a result whose ``unit.json`` cannot be
        read, or a link in place of a result folder, counts as unfinished: it is run again)."""
        found = {}
        for entry in sorted(self.units_dir.glob("*/unit.json")):
            if entry.parent.is_symlink():
                continue
            verdict = _verdict_in(entry)
            if verdict is not None:
                found[entry.parent.name] = verdict
        return found

    def write(self, outcome: UnitOutcome) -> Path:
        """Put ``outcome``'s result in place, replacing an unaccepted one of the same unit.

        Raises a PhasegateError saying what could not be written (a full disk, a read-only
        folder, a link planted meanwhile); nothing is left half-written.
        """
        final = self.units_dir / outcome.unit.id
        if not final.is_symlink() and _verdict_in(final / "unit.json") == "accepted":
            raise PhasegateError(f"{final} holds an accepted result, which is never replaced")
        staging: Path | None = None
        try:
            inside_folder(self.out, f"{UNITS}/{INCOMING}")
            staging = Path(tempfile.mkdtemp(prefix=f"{outcome.unit.id}.", dir=self._incoming))
            for name, data in outcome.files.items():
                inside_folder(staging, name.rpartition("/")[0])  # recording/diffs/...
                write_synced(staging / name, data)
            for name in {name.rpartition("/")[0] for name in outcome.files} - {""}:
                fsync_directory(staging / name)
            record = json.dumps(outcome.record(), indent=2, ensure_ascii=False)
            write_synced(staging / "unit.json", record.encode("utf-8"))
            fsync_directory(staging)
            if os.path.lexists(final):  # an unaccepted result being retried: set it aside
                old = f"{outcome.unit.id}.replaced"
                remove_inside(self._incoming, old)
                os.rename(final, self._incoming / old)  # a link is moved as a link
                os.rename(staging, final)
                remove_inside(self._incoming, old)
            else:
                os.rename(staging, final)
            fsync_directory(self.units_dir)
        except (OSError, LinkedPathError) as exc:
            if staging is not None:
                remove_inside(self._incoming, staging.name)
            problem = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise PhasegateError(
                f"cannot write the result of {outcome.unit.id} in {self.units_dir}: {problem}"
            ) from exc
        return final

    def write_manifest(
        self, *, name: str, file: Path, shard: str | None, total: int, units: Sequence[Unit]
    ) -> None:
        """``batch.json``: the batch, the shard and the units this directory is meant to hold."""
        manifest = {
            "schema_version": RESULTS_VERSION,
            "batch": name,
            "file": str(file),
            "shard": shard,
            "total_units": total,
            "units": [unit.model_dump(mode="json", by_alias=True) for unit in units],
        }
        data = json.dumps(manifest, indent=2, ensure_ascii=False).encode("utf-8")
        try:
            write_atomic(self.out / "batch.json", data, inside=self.out)
        except OSError as exc:
            raise UsageError(
                f"cannot write {self.out / 'batch.json'}: {exc.strerror or exc}", option="out"
            ) from None


def _verdict_in(record_file: Path) -> str | None:
    try:
        return str(json.loads(read_bounded(record_file))["outcome"]["verdict"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
