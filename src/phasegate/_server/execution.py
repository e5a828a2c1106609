"""Carrying out one run: its job built, its process run, how it ended."""

from __future__ import annotations

from multiprocessing.context import ForkServerContext
from pathlib import Path

from phasegate._server.job import RunJob
from phasegate._server.lifecycle import Ending, interrupted
from phasegate._server.live import LiveRun
from phasegate._server.problems import RequestProblem
from phasegate._server.processes import RunProcess
from phasegate._server.records import (
    COPY,
    ERROR,
    EVENTS,
    PROCESS_LOG,
    REPORT,
    load_report,
    outcome_of,
    run_dir,
)
from phasegate._server.resolving import resolve_request
from phasegate._server.settings import DEFAULT_TIMEOUT, ServiceSettings
from phasegate.client.schema import RunRequest
from phasegate.modes import DEFAULT_MAX_ATTEMPTS
from phasegate.telemetry.service_events import RunCancelled


async def execute(live: LiveRun, forks: ForkServerContext, settings: ServiceSettings) -> Ending:
    """Run ``live`` in a process of its own; how it ended."""
    try:
        job = _job(live, settings)
    except RequestProblem as problem:  # its files changed or went away while it was queued
        return Ending(live.ending or "failed", changes={"error": problem.message})
    live.process = RunProcess(forks, job, live.bell)
    if live.ending is not None:  # stopped while its process was being started
        live.process.kill()
    code = await live.process.wait()
    report = load_report(settings.root, live.record.id)
    changes: dict[str, object] = (
        outcome_of(report) if report is not None
        else {"verdict": None, "error": _failure(job.error_file, code, live.record.id)}
    )  # fmt: skip
    if live.ending == "interrupted":
        return interrupted(live.record, "the service shut down before the run finished", **changes)
    if live.ending == "cancelled":
        return Ending("cancelled", [RunCancelled(started=True)], changes)
    return Ending("finished" if report is not None else "failed", changes=changes)


def _job(live: LiveRun, settings: ServiceSettings) -> RunJob:
    record = live.record
    request = RunRequest.model_validate(record.request)
    resolved = resolve_request(settings.root, request)
    folder = run_dir(settings.root, record.id)
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
    )


def _failure(error_file: Path, code: int, run_id: str) -> str:
    try:
        return error_file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return (
            f"the run's process ended with code {code} before it wrote a report; its output "
            f"is in .phasegate/runs/{run_id}/{PROCESS_LOG}"
        )
