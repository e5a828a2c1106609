"""Running one unit: a fresh work directory, the task or pipeline, the result files.

It runs wherever the executor puts it (this process, a Ray worker) and never writes the
batch's output directory: the outcome carries the files, and the batch process writes them.
A bad unit is a result (verdict ``error``), never an exception. A unit that records its run
writes the recording in its temporary folder, and the outcome carries its files under
``recording/``, so it lands in the result folder with the rest, whole.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
from datetime import UTC, datetime
from pathlib import Path

from phasegate._files.scratch import scratch_folder
from phasegate.agents.protocol import Agent
from phasegate.batches.outcome import UnitJob, UnitOutcome
from phasegate.batches.sources import prepare_workdir
from phasegate.batches.units import Unit
from phasegate.errors import PhasegateError
from phasegate.evidence.transcript import Usage
from phasegate.pipelines.report import PipelineReport
from phasegate.running import RunOptions, run_definition
from phasegate.tasks.report import RunReport
from phasegate.telemetry.log import EventLog

RECORDING = "recording"
"""The folder of a unit's recording, in its temporary folder and in its result."""
UNIT_SCRATCH = "phasegate-unit"
"""The prefix of a unit's temporary folder: its copy of the work directory, its event log."""


async def run_unit(job: UnitJob) -> UnitOutcome:
    """Run ``job``'s unit in a fresh directory and return its outcome with its files."""
    started_at, clock = _now(), time.monotonic()
    unit, files = job.unit, {}
    report: RunReport | PipelineReport | None = None
    requests = None
    with scratch_folder(UNIT_SCRATCH) as scratch:
        events = scratch / "events.jsonl"
        try:
            with contextlib.ExitStack() as stack:
                log = stack.enter_context(EventLog(file=events))
                workdir = prepare_workdir(unit.workdir, scratch / "work")
                built = job.agents(unit, stack)
                requests = built.model_requests
                record = scratch / RECORDING if unit.record else None
                report = await _run(job, built.agent, log, workdir, record)
                error = report.error
        except PhasegateError as exc:
            error = str(exc)
        if report is not None:
            files["report.json"] = report.model_dump_json(indent=2).encode("utf-8")
        if isinstance(report, RunReport) and report.transcript is not None:
            files["transcript.json"] = report.transcript.model_dump_json().encode("utf-8")
        if events.exists():
            files["events.jsonl"] = events.read_bytes()
        files.update(_recording_files(scratch / RECORDING))
    usage = report.usage if report is not None else Usage()
    return UnitOutcome(
        unit=unit,
        verdict=report.verdict if report is not None else "error",
        cost_usd=usage.cost_usd,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        duration_ms=round((time.monotonic() - clock) * 1000),
        error=error,
        model_requests=requests() if requests is not None else None,
        worker=_worker(),
        started_at=started_at,
        finished_at=_now(),
        files=files,
    )


def failed_outcome(unit: Unit, error: str) -> UnitOutcome:
    """The outcome of a unit that could not run or report (verdict ``error``, no files)."""
    now = _now()
    return UnitOutcome(
        unit=unit, verdict="error", cost_usd=None, input_tokens=0, output_tokens=0,
        duration_ms=0, error=error, model_requests=None, worker=_worker(), started_at=now,
        finished_at=now,
    )  # fmt: skip


def run_unit_blocking(job: UnitJob) -> UnitOutcome:
    """:func:`run_unit` for a worker process with no event loop running."""
    return asyncio.run(run_unit(job))


async def _run(
    job: UnitJob, agent: Agent, log: EventLog, workdir: Path, record: Path | None
) -> RunReport | PipelineReport:
    unit: Unit = job.unit
    definition = job.definition
    if unit.sandbox is not None:
        definition = definition.model_copy(update={"sandbox": unit.sandbox})
    options = RunOptions(
        mode=unit.mode or "gate", max_attempts=unit.max_attempts,
        isolation=unit.isolation or "session", timeout=unit.timeout, on_event=log,
        record=record,
    )  # fmt: skip
    return await run_definition(definition, workdir, agent, options)


def _recording_files(folder: Path) -> dict[str, bytes]:
    """The files of the recording in ``folder`` (none when it was not written), by their
    names in the result: ``recording/...``. The folder is the unit's own: no link in it."""
    if not (folder / "recording.json").is_file():
        return {}
    return {
        f"{RECORDING}/{path.relative_to(folder).as_posix()}": path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _worker() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"
