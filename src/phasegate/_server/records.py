"""A run as the service keeps it on disk: ``ROOT/.phasegate/runs/<id>/``.

Each run has a folder with ``record.json`` (what was asked and where the run is, rewritten
atomically at each change of status), ``events.jsonl`` (its event log, appended as things
happen), ``report.json`` once the run ended with a report, ``process.log`` (what its process
wrote to stderr) and ``work/`` when it runs in a copy of its work directory.

The service never follows a symbolic link below the root here: ``.phasegate``,
``.phasegate/runs`` and each run's folder must be real folders
(:func:`~phasegate._files.confined.inside_folder`), records and reports are read without
following a link and only when they are regular files (:mod:`phasegate._files.limits`), and a
run folder that is a link is no run.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from phasegate._files.atomic import write_atomic
from phasegate._files.confined import inside_folder
from phasegate._files.limits import ParseProblem, read_bounded
from phasegate.modes import STATE_DIR, DefinitionKind, Isolation, Mode, ReportVerdict, RunStatus

RECORD = "record.json"
EVENTS = "events.jsonl"
REPORT = "report.json"
ERROR = "error.txt"
PROCESS_LOG = "process.log"
COPY = "work"
RECORDING = "recording"
"""The run's recording (docs/recordings.md), in its folder, unless the request turned it off."""
RUNS = f"{STATE_DIR}/runs"
"""The service's runs, relative to the root."""
REPORT_BYTES = 64 * 1024 * 1024
"""The largest report the service reads back (the bound of ``phasegate github``)."""


class RunRecord(BaseModel):
    """What the service knows of one run; ``record.json``."""

    model_config = ConfigDict(extra="forbid")

    id: str
    seq: int
    """Order of creation: runs are listed and started by it."""
    kind: DefinitionKind
    name: str
    status: RunStatus
    verdict: ReportVerdict | None = None
    error: str | None = None
    workdir: str
    """Where the agent works, relative to the root."""
    mode: Mode | None = None
    isolation: Isolation | None = None
    created_at: str
    started_at: str | None = None
    finished_at: str | None = None
    request: dict[str, object]
    """The request as it was accepted (``RunRequest``)."""
    request_digest: str
    inputs: dict[str, str] = Field(default_factory=dict)
    """The input values the run starts with, resolved when it was accepted."""
    input_sources: dict[str, str] = Field(default_factory=dict)
    """Where each input value came from: ``response``, an inference rule, ``default``."""

    @property
    def resumable(self) -> bool:
        """Whether resuming continues it: an interrupted pipeline (from its state file), or
        a run interrupted before it started (from the beginning)."""
        return self.status == "interrupted" and (self.kind == "pipeline" or self.started_at is None)


def runs_dir(root: Path) -> Path:
    """Where the service keeps its runs."""
    return root / STATE_DIR / "runs"


def run_dir(root: Path, run_id: str) -> Path:
    """The folder of one run."""
    return runs_dir(root) / run_id


def make_private(root: Path) -> None:
    """Make the service's folders in ``root`` (made if missing) readable by this user alone:
    they hold the token and every run's events, reports and process output. A link in their
    place raises :class:`~phasegate.errors.LinkedPathError`: nothing is made or changed
    through it."""
    inside_folder(root, RUNS)
    for folder in (root / STATE_DIR, runs_dir(root)):
        folder.chmod(0o700)  # checked above: real folders, so chmod changes them, not a target


def run_folder(root: Path, run_id: str) -> Path:
    """The folder of one run, made private when missing; never a link (a
    :class:`~phasegate.errors.LinkedPathError` then)."""
    inside_folder(root, RUNS)
    folder = run_dir(root, run_id)
    with contextlib.suppress(FileExistsError):  # checked below: a real folder, no link
        folder.mkdir(mode=0o700)
    return inside_folder(root, f"{RUNS}/{run_id}", create=False)


def save_record(root: Path, record: RunRecord) -> None:
    """Write ``record.json`` whole or not at all, inside the root's runs folder."""
    folder = run_folder(root, record.id)
    data = record.model_dump_json(indent=2).encode("utf-8")
    write_atomic(folder / RECORD, data, inside=root)


def load_records(root: Path) -> tuple[list[RunRecord], list[str]]:
    """Every run's record, by ``seq``; and a line per folder that could not be read."""
    records: list[RunRecord] = []
    unreadable: list[str] = []
    folder = runs_dir(root)
    if not folder.is_dir():
        return records, unreadable
    for entry in os.scandir(folder):
        # A link is no run: what it points at is not the service's to read or extend.
        if not entry.is_dir(follow_symlinks=False) or entry.name.startswith("."):
            continue
        path = Path(entry.path) / RECORD
        try:
            records.append(RunRecord.model_validate_json(read_bounded(path, follow_links=False)))
        except (OSError, ParseProblem, ValidationError) as exc:
            unreadable.append(f"{path}: {exc.__class__.__name__}: {str(exc).splitlines()[0]}")
    records.sort(key=lambda r: r.seq)
    return records, unreadable


def load_report(root: Path, run_id: str) -> dict[str, object] | None:
    """The run's report, when it has one."""
    path = run_dir(root, run_id) / REPORT
    try:
        data = json.loads(read_bounded(path, REPORT_BYTES, follow_links=False))
    except (OSError, ValueError):  # missing, not a regular file, too large, not JSON
        return None
    return data if isinstance(data, dict) else None


def outcome_of(report: dict[str, object]) -> dict[str, object]:
    """What a record takes from its run's report: the verdict and the error."""
    verdict, error = report.get("verdict"), report.get("error")
    return {
        "verdict": verdict if isinstance(verdict, str) else None,
        "error": error if isinstance(error, str) else None,
    }
