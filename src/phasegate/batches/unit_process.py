"""The process one local unit runs in: ``python -m phasegate.batches.unit_process OUT``.

It reads a pickled :class:`~.outcome.UnitJob` from stdin, runs it, and writes the pickled
:class:`~.outcome.UnitOutcome` to the file ``OUT``. It runs in a session of its own, so a
Ctrl-C meant for the batch does not reach the unit's agent; and it ends itself, with
everything it started, when the batch process goes away (its stdin closes), so a killed
batch leaves no agent running on.
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

from phasegate._files.atomic import write_atomic
from phasegate._process.child import end_with_parent, receive_job
from phasegate.batches.outcome import UnitJob
from phasegate.batches.unit_run import run_unit_blocking


def main(outcome_file: Path) -> None:
    """Run the job on stdin and write its outcome to ``outcome_file``."""
    job = receive_job(UnitJob)
    end_with_parent()
    outcome = run_unit_blocking(job)
    write_atomic(outcome_file, pickle.dumps(outcome))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
