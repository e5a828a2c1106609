"""What a service run does in its own process, forked by :mod:`~._server.processes`.

It takes a session of its own, sends its output to the run's ``process.log``, runs the task or
pipeline, appends the run's events to its log (ringing the service after each), and writes
the report atomically, or ``error.txt`` when the run cannot start. A report that cannot be
written (a full disk) still has its verdict reach the service, in the exit code, and why
the run could not write its end reaches it over the doorbell, which needs no disk either
(the service says it on its stderr: the run's own output went to a file that may be as
unwritable as the rest). SIGTERM
stops the run the way its timeout would (what the agent did is judged, and a task's
``on_reject`` applies).
When the service goes away, the process ends its whole group at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
import tempfile
from multiprocessing.connection import Connection
from pathlib import Path
from typing import NoReturn

from phasegate._files.atomic import write_atomic
from phasegate._files.confined import open_appending
from phasegate._files.scratch import make_scratch, remove_scratch
from phasegate._process.child import end_with_parent
from phasegate._server.job import CANNOT_START, REPORT_LOST, RUN_SCRATCH, RunJob
from phasegate._server.settings import SANDBOX_DEFAULT
from phasegate.agents.factory import AgentSpec, build_agent
from phasegate.errors import PhasegateError
from phasegate.modes import STATE_DIR
from phasegate.pipelines.report import PipelineReport
from phasegate.pipelines.state import state_path
from phasegate.running import RunOptions, run_definition
from phasegate.tasks.report import RunReport
from phasegate.telemetry.events import fan_out
from phasegate.telemetry.log import EventLog

_PHASEGATE_STATE = shutil.ignore_patterns(STATE_DIR)
"""A copy leaves out phasegate's own state: the service's runs, an earlier run's pipeline."""


def run_child(job: RunJob, bell: Connection, alive: Connection) -> None:
    """Run ``job`` in this freshly forked process; ring ``bell`` after each event; end the
    whole group when ``alive`` closes (the service went away)."""
    try:
        _run_child(job, bell, alive)
    except Exception as exc:
        # Its traceback goes to process.log, which may be what could not be written.
        _tell(bell, f"the run's process failed: {type(exc).__name__}: {exc}")
        raise


def _run_child(job: RunJob, bell: Connection, alive: Connection) -> None:
    os.setsid()
    end_with_parent(alive.fileno())
    log = open_appending(job.process_log, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    # Every temporary folder of the run (the offline model's home, backups) goes in one
    # scratch folder: removed on the way out, or swept by the service if this is killed.
    scratch = make_scratch(RUN_SCRATCH)
    tempfile.tempdir = str(scratch)
    try:
        report = asyncio.run(_run(job, bell))
    except (PhasegateError, OSError) as exc:
        # A run that cannot start (a pipeline's state refuses it, a copy fails) says why.
        _exit(CANNOT_START, job, scratch, str(exc), bell)
    try:
        write_atomic(job.report_file, report.model_dump_json(indent=2).encode("utf-8"))
    except OSError as exc:
        # Judging finished: the verdict goes to the service in the exit code, which needs
        # no disk, and the reason in the error file if that still can be written.
        _note(f"the report could not be written: {exc}")
        lost = f"the run ended ({report.verdict}) but its report could not be saved: {exc}"
        _exit(REPORT_LOST.get(report.verdict, REPORT_LOST["error"]), job, scratch, lost, bell)
    _exit(0, job, scratch)


def _exit(
    code: int,
    job: RunJob,
    scratch: Path,
    error: str | None = None,
    bell: Connection | None = None,
) -> NoReturn:
    """End this process with ``code``, its scratch folder removed; ``error`` written to the
    job's error file first, when the disk takes it, and told the service over ``bell``."""
    remove_scratch(scratch)
    if error is not None:
        try:
            write_atomic(job.error_file, error.encode("utf-8"))
        except OSError as exc:
            _note(f"the error file could not be written either: {exc}")
            error = f"{error}; the error file could not be written either: {exc}"
        if bell is not None:
            _tell(bell, error)
    # Everything is on disk; the interpreter's teardown would only delay the service's word
    # that the run ended, by a third of a second.
    with contextlib.suppress(OSError):  # a full disk: process.log may refuse it too
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


async def _run(job: RunJob, bell: Connection) -> RunReport | PipelineReport:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, _stop_run, loop, stop)
    if job.copy_from is not None and not job.workdir.exists():
        shutil.copytree(job.copy_from, job.workdir, symlinks=True, ignore=_PHASEGATE_STATE)
    with contextlib.ExitStack() as stack:
        log = stack.enter_context(EventLog(file=job.events_file, secrets=job.secrets))
        spec = AgentSpec(model=job.model, timeout=job.timeout, max_cost=job.max_cost,
                         model_script=job.model_script, cli_path=job.cli_path)  # fmt: skip
        options = RunOptions(mode=job.mode, max_attempts=job.max_attempts,
                             isolation=job.isolation, timeout=job.timeout,
                             on_event=fan_out([log, lambda _event: _ring(bell)]),
                             record=job.recording, sandbox=job.sandbox,
                             sandbox_default=SANDBOX_DEFAULT)  # fmt: skip
        resume = job.resume and state_path(job.workdir).exists()
        return await run_definition(
            job.definition, job.workdir, build_agent(spec, stack).agent, options,
            inputs=job.inputs, run_id=job.run_id, stop=stop, resume=resume,
        )  # fmt: skip


def _stop_run(loop: asyncio.AbstractEventLoop, stop: asyncio.Event) -> None:
    """SIGTERM: stop the run as its timeout would, and pass the signal on to the rest of
    this process group (the agent's CLI and what it started), so the CLI ends now instead of
    when the agent's SDK gives up waiting for it."""
    stop.set()
    loop.remove_signal_handler(signal.SIGTERM)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    loop.call_soon(os.killpg, os.getpgrp(), signal.SIGTERM)


def _note(text: str) -> None:
    """``text`` on this process's stderr, ``process.log``, when the disk takes it."""
    with contextlib.suppress(OSError):
        print(text, file=sys.stderr, flush=True)


def _tell(bell: Connection, text: str) -> None:
    """Say why the run ended as it did, over the doorbell: a ring with words in it."""
    with contextlib.suppress(OSError):
        bell.send_bytes(text.encode("utf-8", errors="replace")[:_TOLD_BYTES])


_TOLD_BYTES = 4096
"""The most of a run's last words the service is told (the rest is in the error file)."""


def _ring(bell: Connection) -> None:
    with contextlib.suppress(OSError):  # the service is gone: this process ends soon anyway
        bell.send_bytes(b"")
