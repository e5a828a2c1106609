"""The process one service run works in: ``python -m phasegate._server.run_process``.

It starts before it has a job (the service keeps one ready, so a run does not wait for
Python to start), then reads a pickled :class:`~.job.RunJob` from stdin, runs the task or
pipeline, appends the run's events to its log, and writes the report atomically. After each
event it writes a newline to its original stdout: the service's signal to read the log.
SIGTERM stops the run the way its timeout would (what the agent did is judged, and a task's
``on_reject`` applies); the process ends with its report. When the service goes away (stdin
closes) the process ends its whole group at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys

from phasegate._files.atomic import write_atomic
from phasegate._process.child import end_with_parent, receive_job
from phasegate._server.job import RunJob
from phasegate.errors import PhasegateError
from phasegate.phases.model import Task
from phasegate.sdk.agents.retry import RetryPolicy
from phasegate.sdk.batches.agents import claude_agent
from phasegate.sdk.pipelines.report import PipelineReport
from phasegate.sdk.pipelines.runner import PipelineRunner
from phasegate.sdk.pipelines.state import state_path
from phasegate.sdk.tasks.report import RunReport
from phasegate.sdk.tasks.runner import Runner
from phasegate.sdk.telemetry.events import fan_out
from phasegate.sdk.telemetry.log import EventLog

_PHASEGATE_STATE = shutil.ignore_patterns(".phasegate")
"""A copy leaves out phasegate's own state: the service's runs, an earlier run's pipeline."""


def main() -> None:
    """Wait for the job on stdin, run it, write its report."""
    # stdout is the doorbell; anything else printing there would ring it, so it goes to stderr.
    bell = os.dup(1)
    os.dup2(2, 1)
    job = receive_job(RunJob)
    end_with_parent()
    log = os.open(job.process_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.dup2(log, 2)
    os.dup2(log, 1)
    try:
        report = asyncio.run(_run(job, bell))
    except (PhasegateError, OSError) as exc:
        # A run that cannot start (a pipeline's state refuses it, a copy fails) says why.
        write_atomic(job.error_file, str(exc).encode("utf-8"))
        sys.exit(3)
    write_atomic(job.report_file, report.model_dump_json(indent=2).encode("utf-8"))


async def _run(job: RunJob, bell: int) -> RunReport | PipelineReport:
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    if job.copy_from is not None and not job.workdir.exists():
        shutil.copytree(job.copy_from, job.workdir, symlinks=True, ignore=_PHASEGATE_STATE)
    retry = RetryPolicy(max_total=job.timeout)
    with contextlib.ExitStack() as stack:
        log = stack.enter_context(EventLog(file=job.events_file))
        sink = fan_out([log, lambda _event: _ring(bell)])
        agent = claude_agent(
            stack, model=job.model, timeout=job.timeout, max_cost=job.max_cost,
            model_script=job.model_script, cli_path=job.cli_path,
        ).agent  # fmt: skip
        if isinstance(job.definition, Task):
            runner = Runner(agent, mode=job.mode, max_attempts=job.max_attempts, on_event=sink,
                            retry=retry, timeout=job.timeout)  # fmt: skip
            return await runner.run(job.definition, job.workdir, run_id=job.run_id, stop=stop)
        pipelines = PipelineRunner(agent, isolation=job.isolation, on_event=sink, retry=retry,
                                   timeout=job.timeout)  # fmt: skip
        if job.resume and state_path(job.workdir).exists():
            return await pipelines.resume(job.definition, job.workdir, stop=stop)
        return await pipelines.run(job.definition, job.workdir, run_id=job.run_id, stop=stop)


def _ring(bell: int) -> None:
    with contextlib.suppress(OSError):  # the service is gone: this process ends soon anyway
        os.write(bell, b"\n")


if __name__ == "__main__":
    main()
    sys.exit(0)
