"""Carrying out one run: its job built, its process run, its end recorded."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from phasegate._server.job import RunJob
from phasegate._server.problems import RequestProblem
from phasegate._server.processes import RunProcess
from phasegate._server.records import (
    COPY,
    ERROR,
    EVENTS,
    PROCESS_LOG,
    REPORT,
    load_report,
    run_dir,
)
from phasegate._server.resolving import resolve_request
from phasegate._server.settings import DEFAULT_TIMEOUT
from phasegate.client.schema import RunRequest
from phasegate.modes import DEFAULT_MAX_ATTEMPTS
from phasegate.sdk.telemetry.service_events import RunCancelled, RunInterrupted

if TYPE_CHECKING:
    from phasegate._server.service import LiveRun, RunService


async def execute(service: RunService, live: LiveRun) -> None:
    """Run ``live`` in a process of its own and record how it ended."""
    try:
        job = _job(service, live)
    except RequestProblem as problem:  # its files changed or went away while it was queued
        service.end(live, "failed", error=problem.message)
        return
    process = await service.processes.take()
    live.process = RunProcess(process, live.bell)
    if live.ending is not None:  # stopped while its process was being started
        live.process.kill()
    code = await live.process.run(job)
    folder = run_dir(service.root, live.record.id)
    report = load_report(service.root, live.record.id)
    if report is not None:
        verdict, error = report.get("verdict"), report.get("error")
    else:
        verdict, error = None, _failure(folder / ERROR, code, live.record.id)
    status = live.ending or ("finished" if report is not None else "failed")
    resumable = status == "interrupted" and live.record.kind == "pipeline"
    closing = (
        [RunCancelled(started=True)] if status == "cancelled"
        else [RunInterrupted(reason="the service shut down before the run finished",
                             resumable=resumable)] if status == "interrupted"
        else []
    )  # fmt: skip
    service.end(
        live, status, *closing,
        verdict=verdict if isinstance(verdict, str) else None,
        error=error if isinstance(error, str) else None, resumable=resumable,
    )  # fmt: skip


def _job(service: RunService, live: LiveRun) -> RunJob:
    record, settings = live.record, service.settings
    request = RunRequest.model_validate(record.request)
    resolved = resolve_request(service.root, request)
    folder = run_dir(service.root, record.id)
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
    )


def _failure(error_file: Path, code: int, run_id: str) -> str:
    try:
        return error_file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return (
            f"the run's process ended with code {code} before it wrote a report; its output "
            f"is in .phasegate/runs/{run_id}/{PROCESS_LOG}"
        )
