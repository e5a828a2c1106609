"""The runs of one service: accepted, queued in order, run within the bound, ended on request.

Every change of a run's status goes through :func:`~.lifecycle.moved` and is written to its
record before anyone hears of it; the events that close a run are appended after its record
says it ended, then every stream following it is woken.

A run always ends, even when its end cannot be written (a full disk, an immutable file): the
run's record says so in ``error`` as the service answers it, the failure is logged, and the
closing events the log could not take are kept in memory, so every stream still gets its
``done``. Files under the root are read in a worker thread, before the service's lock is
taken: a slow or hostile file delays only its own request.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import deque
from pathlib import Path
from typing import Any

from phasegate._files.confined import remove_inside
from phasegate._files.digests import json_digest
from phasegate._files.scratch import sweep_dead
from phasegate._secrets import environment_secrets
from phasegate._server.event_files import append_lines, event_lines, service_event
from phasegate._server.execution import execute
from phasegate._server.idempotency import IdempotencyKeys
from phasegate._server.inputs import plan_for, run_values
from phasegate._server.job import RUN_SCRATCH
from phasegate._server.lifecycle import ENDED, Ending, interrupted, moved, now
from phasegate._server.live import LiveRun
from phasegate._server.problems import RequestProblem, not_found, root_relative, storage_failed
from phasegate._server.processes import RunContext, run_context
from phasegate._server.records import (
    COPY,
    EVENTS,
    RunRecord,
    load_records,
    make_private,
    run_dir,
    runs_dir,
    save_record,
)
from phasegate._server.recovery import DONE_ONLY, RecordOnly, repair
from phasegate._server.resolving import ResolvedRequest, resolve_request
from phasegate._server.settings import ServiceSettings
from phasegate.client.schema import PlanRequest, RunRequest
from phasegate.errors import LinkedPathError
from phasegate.planning.plan import Plan
from phasegate.planning.values import InputValues
from phasegate.telemetry.events import EventData, RunCancelled, RunDone, RunQueued, new_run_id

_log = logging.getLogger("phasegate.serve")

STORAGE_ERRORS = (OSError, LinkedPathError)
"""What writing the service's own files raises: a full disk, a read-only or immutable file,
a link planted in the service's folder."""


class RunService:
    """Accepts runs, keeps at most ``max_concurrent`` running, and ends them on request."""

    def __init__(self, settings: ServiceSettings) -> None:
        self.settings = settings
        self.root = settings.root.resolve()
        self.runs: dict[str, LiveRun] = {}
        self.queue: deque[str] = deque()
        self.running: set[str] = set()
        self.accepting = True
        self._forks: RunContext | None = None
        self.keys = IdempotencyKeys(self.root)
        self.unreadable: list[str] = []
        self.hidden_text = [*settings.secrets, *environment_secrets(os.environ)]
        """What no response shows: the service's token, the environment's secrets."""
        self._last_seq = 0
        self._lock = asyncio.Lock()

    # -- starting and stopping the service -----------------------------------------------
    def start(self) -> None:
        """Start the fork server runs come from (if they come from one), so the first run does
        not wait for it."""
        if self._forks is None:
            self._forks = run_context()

    def recover(self) -> None:
        """Load every run on disk, and end what a previous instance left unfinished as
        :func:`~.recovery.repair` says."""
        make_private(self.root)
        # The temporary folders of runs whose processes a killed service took with it.
        for folder in sweep_dead(RUN_SCRATCH):
            _log.info("removed the scratch folder of an ended run: %s", folder)
        records, self.unreadable = load_records(self.root)
        for record in records:
            live = self.runs[record.id] = LiveRun(record)
            self._last_seq = max(self._last_seq, record.seq)
            fix = repair(self.root, record)
            if fix == DONE_ONLY:
                self._append(live, RunDone(status=record.status, verdict=record.verdict))
            elif isinstance(fix, RecordOnly):
                live.record = moved(record, fix.status, **fix.changes)
                self._save_end(live)
            elif isinstance(fix, Ending):
                self.end(live, fix)

    async def drain(self) -> None:
        """Stop accepting runs; interrupt queued ones; give running ones the grace period,
        then interrupt them (a pipeline's state stays resumable), killing what is still there
        ``stop_grace`` seconds later."""
        self.accepting = False
        while self.queue:
            live = self.runs[self.queue.popleft()]
            self.end(live, interrupted(live.record, "the service shut down before the run started"))
        tasks = [t for i in self.running if (t := self.runs[i].task) is not None]
        if not tasks:
            return
        _, late = await asyncio.wait(tasks, timeout=self.settings.grace)
        for run_id in list(self.running):
            self._interrupt(self.runs[run_id])
        if late:
            # A stopped task still judges and writes its report; bounded like a cancel.
            _, stuck = await asyncio.wait(late, timeout=self.settings.stop_grace)
            for run_id in list(self.running):
                if (process := self.runs[run_id].process) is not None:
                    process.kill()
            if stuck:
                await asyncio.wait(stuck)

    # -- requests ------------------------------------------------------------------------
    def _resolve(self, request: RunRequest) -> tuple[ResolvedRequest, InputValues | None]:
        resolved = resolve_request(self.root, request)
        return resolved, run_values(resolved, request, self.root)

    def plan(self, request: PlanRequest) -> Plan:
        """The reference plan ``request`` asks for (reads the work directory, writes nothing)."""
        return plan_for(resolve_request(self.root, request), request)

    async def submit(self, request: RunRequest, key: str | None) -> tuple[LiveRun, bool]:
        """Accept ``request`` (or find the run its idempotency ``key`` started); whether it
        was found rather than started."""
        if not self.accepting:
            raise RequestProblem(503, "shutting_down", "the service is shutting down; retry "
                                 "against its next instance")  # fmt: skip
        digest = json_digest(_as_first_sent(request))
        if key is not None and (found := self._find_key(key, digest)) is not None:
            return found, True
        # Reading the definition and the work directory may be slow (a large tree, a slow
        # disk): in a thread and before the lock, so no other request waits behind it and
        # the event loop keeps serving streams and /healthz meanwhile.
        resolved, values = await asyncio.to_thread(self._resolve, request)
        async with self._lock:
            # Checked again: the same key may have been accepted while this one was read.
            if key is not None and (found := self._find_key(key, digest)) is not None:
                return found, True
            if not request.copy_workdir:
                self._refuse_busy(resolved.workdir)
            run_id = new_run_id()
            where = run_dir(self.root, run_id) / COPY if request.copy_workdir else resolved.workdir
            record = RunRecord(
                id=run_id,
                seq=self._next_seq(),
                kind=request.kind,
                name=resolved.definition.name,
                status="queued",
                workdir=str(where.relative_to(self.root.resolve())),
                mode=(request.mode or "gate") if request.kind == "task" else None,
                isolation=(request.isolation or "session") if request.kind == "pipeline" else None,
                created_at=now(),
                request=request.model_dump(mode="json"),
                request_digest=digest,
                inputs=values.as_text() if values is not None else {},
                input_sources=values.provenance if values is not None else {},
            )
            try:
                save_record(self.root, record)
            except STORAGE_ERRORS as exc:
                remove_inside(runs_dir(self.root), run_id)  # no run without its record
                raise self._storage_problem("the new run's record", exc) from None
            if key is not None:
                self._remember_key(key, digest, run_id)
            live = self.runs[run_id] = LiveRun(record)
            self._enqueue(live)
        return live, False

    def _storage_problem(self, what: str, exc: BaseException) -> RequestProblem:
        """A 503 ``storage_failed`` for a request, logged once here."""
        _log.error("could not write %s: %s", what, exc)
        return storage_failed(what, exc, self.root)

    def _find_key(self, key: str, digest: str) -> LiveRun | None:
        try:
            found = self.keys.find(key, digest)
        except STORAGE_ERRORS as exc:
            raise self._storage_problem("its idempotency keys", exc) from None
        return self.runs.get(found) if found is not None else None

    def _remember_key(self, key: str, digest: str, run_id: str) -> None:
        try:
            self.keys.remember(key, digest, run_id)
        except STORAGE_ERRORS as exc:
            # The run is accepted and answered; only a retry with this key would start another.
            _log.error("run %s: its idempotency key could not be kept: %s", run_id, exc)

    def get(self, run_id: str) -> LiveRun:
        """The run with this id; a 404 problem when there is none."""
        live = self.runs.get(run_id)
        if live is None:
            raise not_found(run_id)
        return live

    async def cancel(self, run_id: str) -> LiveRun:
        """Cancel a queued or running run and wait until it has ended."""
        live = self.get(run_id)
        status = live.record.status
        if status == "queued":
            self.queue.remove(run_id)
            self.end(live, Ending("cancelled", [RunCancelled(started=False)]))
        elif status == "running" and live.ending is None:
            live.ending = "cancelled"
            if live.process is not None:
                await live.process.end(self.settings.stop_grace)
        elif status in ENDED:
            raise RequestProblem(409, "run_ended", f"run {run_id} already ended ({status}); "
                                 "there is nothing to cancel")  # fmt: skip
        if live.task is not None:
            await asyncio.shield(live.task)
        return live

    async def resume(self, run_id: str) -> LiveRun:
        """Queue an interrupted run again: a pipeline continues from its state."""
        live = self.get(run_id)
        if not live.record.resumable:
            raise RequestProblem(
                409,
                "not_resumable",
                f"run {run_id} is {live.record.status} and cannot be resumed; only an "
                "interrupted pipeline, or a run interrupted before it started, can; start a "
                "new run instead",
            )
        if not self.accepting:
            raise RequestProblem(503, "shutting_down", "the service is shutting down")
        request = RunRequest.model_validate(live.record.request)
        if not request.copy_workdir:
            self._refuse_busy(self.root / live.record.workdir)
        record = moved(live.record, "queued")
        try:
            save_record(self.root, record)
        except STORAGE_ERRORS as exc:
            raise self._storage_problem("the run's record", exc) from None
        live.record = record
        live.ending, live.resuming = None, True
        live.unsaved.clear()  # numbered after lines the log never got: the log goes on as it is
        self._enqueue(live)
        return live

    # -- running -------------------------------------------------------------------------
    def end(self, live: LiveRun, ending: Ending) -> None:
        """Move ``live`` to the ended status of ``ending``, then append its closing events
        and ``done``. It ends even when that cannot be written: the record's ``error`` says
        so (as the service answers it) and its streams still get ``done``."""
        live.record = moved(live.record, ending.status, **ending.changes)
        self._save_end(live)
        done = RunDone(status=ending.status, verdict=live.record.verdict)
        self._append(live, *ending.closing, done)

    def _save_end(self, live: LiveRun) -> None:
        """Save the record of a run that ended; when that fails, log it and say so in the
        record the service answers with."""
        try:
            save_record(self.root, live.record)
        except STORAGE_ERRORS as exc:
            _log.error("run %s ended %s, but its record could not be saved: %s",
                       live.record.id, live.record.status, exc)  # fmt: skip
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            lost = f"the service could not save the run's end: {root_relative(reason, self.root)}"
            error = f"{live.record.error}; {lost}" if live.record.error else lost
            live.record = live.record.model_copy(update={"error": error})

    def _enqueue(self, live: LiveRun) -> None:
        position = len(self.queue) + 1 if len(self.running) >= self.settings.max_concurrent else 0
        self._append(live, RunQueued(kind=live.record.kind, position=position))
        self.queue.append(live.record.id)
        self._pump()

    def _pump(self) -> None:
        while self.accepting and self.queue and len(self.running) < self.settings.max_concurrent:
            live = self.runs[self.queue.popleft()]
            self.running.add(live.record.id)
            live.record = moved(live.record, "running")
            try:
                save_record(self.root, live.record)
            except STORAGE_ERRORS as exc:
                # It runs all the same: its end says what could not be saved.
                _log.error("run %s started, but its record could not be saved: %s",
                           live.record.id, exc)  # fmt: skip
            live.bell.ring()
            live.task = asyncio.create_task(self._execute(live))
            live.task.add_done_callback(_report_failure)

    async def _execute(self, live: LiveRun) -> None:
        try:
            self.start()
            assert self._forks is not None
            ending = await execute(live, self._forks, self.settings)
        except Exception as exc:  # the service's own failure (a full disk): never a lost run
            _log.exception("run %s failed in the service", live.record.id)
            ending = Ending(live.ending or "failed", changes={"error": f"the service failed "
                            f"to carry out the run: {exc.__class__.__name__}: {exc}"})  # fmt: skip
        try:
            self.end(live, ending)
        finally:
            self.running.discard(live.record.id)
            live.process = None
            self._pump()

    def _interrupt(self, live: LiveRun) -> None:
        if live.ending is not None or live.process is None:
            return
        live.ending = "interrupted"
        if live.record.kind == "pipeline":
            live.process.kill()
        else:
            live.process.stop()

    def _append(self, live: LiveRun, *events: EventData) -> None:
        """Append ``events`` to the run's log, and ring. Lines the log cannot take are kept
        in memory (and the failure logged), so the run's streams still get them."""
        path = run_dir(self.root, live.record.id) / EVENTS
        lines = event_lines([service_event(data, live.record) for data in events],
                            self.settings.secrets)  # fmt: skip
        for number, line in enumerate(lines):
            if live.unsaved:  # the log already lost a line: later ones would take its number
                live.unsaved.extend(lines[number:])
                break
            try:
                append_lines(path, [line])
            except STORAGE_ERRORS as exc:
                _log.error("run %s: its event log could not be extended: %s", live.record.id, exc)
                live.unsaved.extend(lines[number:])
                break
        live.bell.ring()

    def _refuse_busy(self, workdir: Path) -> None:
        """A 409 when a queued or running run works in ``workdir``, in a folder inside it, or
        in one holding it: two agents would change one tree."""
        for run_id in (*self.queue, *self.running):
            record = self.runs[run_id].record
            theirs = self.root / record.workdir
            overlap = theirs == workdir or theirs.is_relative_to(workdir) or (
                workdir.is_relative_to(theirs))  # fmt: skip
            if overlap:
                raise RequestProblem(
                    409,
                    "workdir_busy",
                    f"run {record.id} is already {record.status} in {record.workdir}, which "
                    "overlaps this work directory; wait for it, or run in a copy (copy_workdir)",
                    field="workdir",
                )

    def _next_seq(self) -> int:
        self._last_seq += 1
        return self._last_seq


def _report_failure(task: asyncio.Task[None]) -> None:
    """Log what a run's task raised: no exception of the service is ever dropped."""
    if not task.cancelled() and (exc := task.exception()) is not None:
        _log.error("a run's task failed in the service", exc_info=exc)


_ADDED_LATER = ("context", "inputs", "plan")
"""Request fields newer than the first version; left out of a request's digest when unset,
so an idempotency key kept before they existed still matches the same request."""


def _as_first_sent(request: RunRequest) -> dict[str, Any]:
    dump = request.model_dump(mode="json")
    return {k: v for k, v in dump.items() if not (k in _ADDED_LATER and v is None)}
