"""The local executor: each unit in a process of its own on this machine.

A process per unit keeps units apart (one unit's crash is its own error result), lets them
use every core, and puts each in its own session so a Ctrl-C at the terminal reaches only
the batch, which then decides what running units get. Cancelling a unit ends its process
group; if the batch process dies, each unit process sees its stdin close and ends itself.
"""

from __future__ import annotations

import asyncio
import os
import pickle

from phasegate._files.scratch import scratch_folder
from phasegate._process.parent import end_group, send_job, start_child
from phasegate.batches.outcome import UnitJob, UnitOutcome
from phasegate.batches.unit_run import failed_outcome

OUTCOME_SCRATCH = "phasegate-unit-out"
"""The prefix of the temporary folder a unit's process leaves its outcome in."""

_STOP_WAIT = 5.0
"""Seconds a cancelled unit gets to end on SIGTERM before SIGKILL."""


class LocalExecutor:
    """Runs units in processes of their own on this machine."""

    name = "local"

    def default_concurrency(self) -> int:
        """One unit per CPU."""
        return os.cpu_count() or 1

    async def run(self, job: UnitJob) -> UnitOutcome:
        """Run the unit in a new process and return its outcome."""
        with scratch_folder(OUTCOME_SCRATCH) as scratch:
            outcome_file = scratch / "outcome.pickle"
            process = await start_child("phasegate.batches.unit_process", str(outcome_file))
            assert process.stdin is not None
            try:
                await send_job(process, job)
                code = await process.wait()
            except asyncio.CancelledError:
                await end_group(process, _STOP_WAIT)
                raise
            finally:
                process.stdin.close()
            if code == 0 and outcome_file.exists():
                outcome = pickle.loads(outcome_file.read_bytes())
                if isinstance(outcome, UnitOutcome):
                    return outcome
            return failed_outcome(
                job.unit, f"the unit's process ended with code {code} before it reported"
            )

    def close(self) -> None:
        """Nothing to release: every unit process has ended when its run returns."""
