"""What a service run does in its own process, forked by :mod:`~._server.processes`.

It takes a session of its own, sends its output to the run's ``process.log``, runs the task or
pipeline, appends the run's events to its log (ringing the service after each), and writes
the report atomically, or ``error.txt`` when the run cannot start. SIGTERM stops the run the
way its timeout would (what the agent did is judged, and a task's ``on_reject`` applies).
When the service goes away, the process ends its whole group at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
from multiprocessing.connection import Connection

from phasegate._files.atomic import write_atomic
from phasegate._process.child import end_with_parent
from phasegate._server.job import RunJob
from phasegate.errors import PhasegateError
from phasegate.phases.model import Task
from phasegate.agents.retry import RetryPolicy
from phasegate.batches.agents import claude_agent
from phasegate.pipelines.report import PipelineReport
from phasegate.pipelines.runner import PipelineRunner
from phasegate.pipelines.state import STATE_DIR, state_path
from phasegate.tasks.report import RunReport
from phasegate.tasks.runner import Runner
from phasegate.telemetry.events import fan_out
from phasegate.telemetry.log import EventLog

_PHASEGATE_STATE = shutil.ignore_patterns(STATE_DIR)
"""A copy leaves out phasegate's own state: the service's runs, an earlier run's pipeline."""


def run_child(job: RunJob, bell: Connection, alive: Connection) -> None:
    """Run ``job`` in this freshly forked process; ring ``bell`` after each event; end the
    whole group when ``alive`` closes (the service went away)."""
    os.setsid()
    end_with_parent(alive.fileno())
    log = os.open(job.process_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    try:
        report = asyncio.run(_run(job, bell))
    except (PhasegateError, OSError) as exc:
        # A run that cannot start (a pipeline's state refuses it, a copy fails) says why.
        write_atomic(job.error_file, str(exc).encode("utf-8"))
        _exit(3)
    write_atomic(job.report_file, report.model_dump_json(indent=2).encode("utf-8"))
    _exit(0)


def _exit(code: int) -> None:
    # Everything is on disk; the interpreter's teardown would only delay the service's word
    # that the run ended, by a third of a second.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


async def _run(job: RunJob, bell: Connection) -> RunReport | PipelineReport:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, _stop_run, loop, stop)
    if job.copy_from is not None and not job.workdir.exists():
        shutil.copytree(job.copy_from, job.workdir, symlinks=True, ignore=_PHASEGATE_STATE)
    retry = RetryPolicy(max_total=job.timeout)
    with contextlib.ExitStack() as stack:
        log = stack.enter_context(EventLog(file=job.events_file, secrets=job.secrets))
        sink = fan_out([log, lambda _event: _ring(bell)])
        agent = claude_agent(
            stack, model=job.model, timeout=job.timeout, max_cost=job.max_cost,
            model_script=job.model_script, cli_path=job.cli_path,
        ).agent  # fmt: skip
        if isinstance(job.definition, Task):
            runner = Runner(agent, mode=job.mode, max_attempts=job.max_attempts, on_event=sink,
                            retry=retry, timeout=job.timeout)  # fmt: skip
            return await runner.run(job.definition, job.workdir, run_id=job.run_id, stop=stop,
                                    inputs=job.inputs)  # fmt: skip
        pipelines = PipelineRunner(agent, isolation=job.isolation, on_event=sink, retry=retry,
                                   timeout=job.timeout)  # fmt: skip
        if job.resume and state_path(job.workdir).exists():
            return await pipelines.resume(job.definition, job.workdir, stop=stop,
                                          inputs=job.inputs)  # fmt: skip
        return await pipelines.run(job.definition, job.workdir, run_id=job.run_id, stop=stop,
                                   inputs=job.inputs)  # fmt: skip


def _stop_run(loop: asyncio.AbstractEventLoop, stop: asyncio.Event) -> None:
    """SIGTERM: stop the run as its timeout would, and pass the signal on to the rest of
    this process group (the agent's CLI and what it started), so the CLI ends now instead of
    when the agent's SDK gives up waiting for it."""
    stop.set()
    loop.remove_signal_handler(signal.SIGTERM)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    loop.call_soon(os.killpg, os.getpgrp(), signal.SIGTERM)


def _ring(bell: Connection) -> None:
    with contextlib.suppress(OSError):  # the service is gone: this process ends soon anyway
        bell.send_bytes(b"")
