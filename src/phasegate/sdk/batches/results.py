"""A batch's output directory: each finished unit's result, whole or not at all.

A result is a directory ``units/<id>/`` made complete under ``units/.incoming/`` and renamed
into place, so a crash at any moment leaves every result either finished or absent; an
absent result is simply run again. One batch process writes a directory at a time (a lock
file says so). An accepted result is never replaced.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from phasegate._files.atomic import fsync_directory, write_atomic, write_synced
from phasegate.errors import PhasegateError, UsageError
from phasegate.sdk.batches.outcome import RESULTS_VERSION, UnitOutcome
from phasegate.sdk.batches.units import Unit


class ResultStore:
    """The results under ``out``: which units are finished, and writing a new one."""

    def __init__(self, out: str | Path) -> None:
        self.out = Path(out)
        self.units_dir = self.out / "units"
        self._incoming = self.units_dir / ".incoming"

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the directory's lock; refuse when another batch process holds it."""
        try:
            self._incoming.mkdir(parents=True, exist_ok=True)
            lock = (self.out / ".lock").open("a")
        except OSError as exc:
            raise UsageError(f"cannot write to {self.out}: {exc}", option="out") from None
        with lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise UsageError(
                    f"another batch run is writing to {self.out}; wait for it to end, or "
                    "choose another output directory",
                    option="out",
                ) from None
            # Left by a process that died mid-write: never a result, safe to drop.
            for leftover in self._incoming.iterdir():
                shutil.rmtree(leftover, ignore_errors=True)
            yield

    def verdicts(self) -> dict[str, str]:
        """The verdict of every finished unit, by id (a result whose ``unit.json`` cannot be
        read counts as unfinished: it is run again)."""
        found = {}
        for entry in sorted(self.units_dir.glob("*/unit.json")):
            verdict = _verdict_in(entry)
            if verdict is not None:
                found[entry.parent.name] = verdict
        return found

    def write(self, outcome: UnitOutcome) -> Path:
        """Put ``outcome``'s result in place, replacing an unaccepted one of the same unit."""
        final = self.units_dir / outcome.unit.id
        if _verdict_in(final / "unit.json") == "accepted":
            raise PhasegateError(f"{final} holds an accepted result, which is never replaced")
        staging = Path(tempfile.mkdtemp(prefix=f"{outcome.unit.id}.", dir=self._incoming))
        try:
            for name, data in outcome.files.items():
                write_synced(staging / name, data)
            record = json.dumps(outcome.record(), indent=2, ensure_ascii=False)
            write_synced(staging / "unit.json", record.encode("utf-8"))
            fsync_directory(staging)
            if final.exists():  # an unaccepted result being retried: set it aside first
                old = self._incoming / f"{outcome.unit.id}.replaced"
                os.rename(final, old)
                os.rename(staging, final)
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.rename(staging, final)
            fsync_directory(self.units_dir)
        except OSError as exc:
            shutil.rmtree(staging, ignore_errors=True)
            raise PhasegateError(f"cannot write the result of {outcome.unit.id}: {exc}") from exc
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
            write_atomic(self.out / "batch.json", data)
        except OSError as exc:
            raise UsageError(f"cannot write {self.out / 'batch.json'}: {exc}") from None


def _verdict_in(record_file: Path) -> str | None:
    try:
        return str(json.loads(record_file.read_bytes())["outcome"]["verdict"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
