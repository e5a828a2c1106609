"""A run as the service keeps it on disk: ``ROOT/.phasegate/runs/<id>/``.

Each run has a folder with ``record.json`` (what was asked and where the run is, rewritten
atomically at each change of status), ``events.jsonl`` (its event log, appended as things
happen), ``report.json`` once the run ended with a report, ``process.log`` (what its process
wrote to stderr) and ``work/`` when it runs in a copy of its work directory.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from phasegate._files.atomic import write_atomic
from phasegate.client.schema import RunKind, RunStatus
from phasegate.modes import Isolation, Mode
from phasegate.pipelines.state import STATE_DIR

RECORD = "record.json"
EVENTS = "events.jsonl"
REPORT = "report.json"
ERROR = "error.txt"
PROCESS_LOG = "process.log"
COPY = "work"


class RunRecord(BaseModel):
    """What the service knows of one run; ``record.json``."""

    model_config = ConfigDict(extra="forbid")

    id: str
    seq: int
    """Order of creation: runs are listed and started by it."""
    kind: RunKind
    name: str
    status: RunStatus
    verdict: str | None = None
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
    they hold the token and every run's events, reports and process output."""
    for folder in (root / STATE_DIR, runs_dir(root)):
        folder.mkdir(mode=0o700, exist_ok=True)
        folder.chmod(0o700)


def save_record(root: Path, record: RunRecord) -> None:
    """Write ``record.json`` whole or not at all."""
    folder = run_dir(root, record.id)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_atomic(folder / RECORD, record.model_dump_json(indent=2).encode("utf-8"))


def load_records(root: Path) -> tuple[list[RunRecord], list[str]]:
    """Every run's record, by ``seq``; and a line per folder that could not be read."""
    records: list[RunRecord] = []
    unreadable: list[str] = []
    folder = runs_dir(root)
    if not folder.is_dir():
        return records, unreadable
    for entry in os.scandir(folder):
        if not entry.is_dir() or entry.name.startswith("."):
            continue
        path = Path(entry.path) / RECORD
        try:
            records.append(RunRecord.model_validate_json(path.read_bytes()))
        except (OSError, ValidationError) as exc:
            unreadable.append(f"{path}: {exc.__class__.__name__}: {str(exc).splitlines()[0]}")
    records.sort(key=lambda r: r.seq)
    return records, unreadable


def load_report(root: Path, run_id: str) -> dict[str, object] | None:
    """The run's report, when it has one."""
    try:
        data = json.loads((run_dir(root, run_id) / REPORT).read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def outcome_of(report: dict[str, object]) -> dict[str, object]:
    """What a record takes from its run's report: the verdict and the error."""
    verdict, error = report.get("verdict"), report.get("error")
    return {
        "verdict": verdict if isinstance(verdict, str) else None,
        "error": error if isinstance(error, str) else None,
    }
