"""Carrying out one run: its job built, its process run, how it ended.

The job is built in a worker thread: it reads the definition's files again (they may have
changed while the run was queued), which must never stall the event loop.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from phasegate._files.confined import inside_folder
from phasegate._files.limits import read_bounded
from phasegate._files.scratch import sweep_dead
from phasegate._server.job import RUN_SCRATCH, VERDICT_OF_CODE, RunJob
from phasegate._server.lifecycle import Ending, interrupted
from phasegate._server.live import LiveRun
from phasegate._server.problems import RequestProblem
from phasegate._server.processes import RunContext, RunProcess
from phasegate._server.records import (
    COPY,
    ERROR,
    EVENTS,
    PROCESS_LOG,
    RECORDING,
    REPORT,
    RUNS,
    load_report,
    outcome_of,
)
from phasegate._server.resolving import resolve_request
from phasegate._server.settings import DEFAULT_TIMEOUT, ServiceSettings
from phasegate.client.schema import RunRequest
from phasegate.modes import DEFAULT_MAX_ATTEMPTS
from phasegate.telemetry.events import RunCancelled

_log = logging.getLogger("phasegate.serve")


async def execute(live: LiveRun, forks: RunContext, settings: ServiceSettings) -> Ending:
    """Run ``live`` in a process of its own; how it ended."""
    try:
        job = await asyncio.to_thread(_job, live, settings)
    except RequestProblem as problem:  # its files changed or went away while it was queued
        return Ending(live.ending or "failed", changes={"error": problem.message})
    live.process = RunProcess(forks, job, live.bell)
    if live.ending is not None:  # stopped while its process was being started
        live.process.kill()
    code = await live.process.wait()
    # A run killed after its grace could not remove its own scratch folder.
    await asyncio.to_thread(sweep_dead, RUN_SCRATCH)
    report = await asyncio.to_thread(load_report, settings.root, live.record.id)
    # A run whose report was lost still ended with a verdict: its exit code carries it.
    verdict = VERDICT_OF_CODE.get(code)
    changes: dict[str, object] = (
        outcome_of(report) if report is not None
        else {"verdict": verdict, "error": await asyncio.to_thread(
            _failure, job.error_file, code, live.record.id, live.process.told)}
    )  # fmt: skip
    if report is None:
        # The run's own output is in a file under the root, which may be what failed.
        _log.error("run %s ended without a report (%s): %s", live.record.id,
                   job.report_file, changes["error"])  # fmt: skip
    if live.ending == "interrupted":
        return interrupted(live.record, "the service shut down before the run finished", **changes)
    if live.ending == "cancelled":
        return Ending("cancelled", [RunCancelled(started=True)], changes)
    judged = report is not None or verdict is not None
    return Ending("finished" if judged else "failed", changes=changes)


def _job(live: LiveRun, settings: ServiceSettings) -> RunJob:
    record = live.record
    request = RunRequest.model_validate(record.request)
    resolved = resolve_request(settings.root, request)
    # The run's files are written by its process: its folder must be a real one, no link.
    folder = inside_folder(settings.root, f"{RUNS}/{record.id}", create=False)
    for stale in (REPORT, ERROR):  # a resumed run writes its own
        (folder / stale).unlink(missing_ok=True)
    return RunJob(
        run_id=record.id,
        definition=resolved.definition,
        workdir=folder / COPY if request.copy_workdir else resolved.workdir,
        copy_from=resolved.workdir if request.copy_workdir else None,
        mode=record.mode or "gate",
        isolation=record.isolation or "session",
        max_attempts=request.max_attempts or DEFAULT_MAX_ATTEMPTS,
        model=request.model,
        timeout=request.timeout or DEFAULT_TIMEOUT,
        max_cost=request.max_cost,
        resume=live.resuming,
        events_file=folder / EVENTS,
        report_file=folder / REPORT,
        error_file=folder / ERROR,
        process_log=folder / PROCESS_LOG,
        model_script=settings.model_script,
        cli_path=settings.cli_path,
        inputs=record.inputs or None,
        secrets=settings.secrets,
        recording=None if request.record is False else folder / RECORDING,
        sandbox=settings.sandbox,
    )


def _failure(error_file: Path, code: int, run_id: str, told: str | None) -> str:
    try:
        return read_bounded(error_file, follow_links=False).decode("utf-8", errors="replace")
    except (OSError, ValueError):
        pass
    if told is not None:  # the run could not write its error file, but said why
        return told
    log = f".phasegate/runs/{run_id}/{PROCESS_LOG}"
    if (verdict := VERDICT_OF_CODE.get(code)) is not None:
        return f"the run ended ({verdict}) but its report could not be saved; see {log}"
    return (
        f"the run's process ended with code {code} before it wrote a report; its output is in {log}"
    )
