"""What the service hands a run's process: everything it needs, loaded and checked."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from phasegate.modes import Isolation, Mode
from phasegate.phases.model import Task
from phasegate.phases.pipeline import Pipeline
from phasegate.phases.sandbox import SandboxMode

RUN_SCRATCH = "phasegate-serve-run"
"""The prefix of a run process's scratch folder (:mod:`phasegate._files.scratch`), which holds
its temporary folders (the offline model's home, backups); a service sweeps those of dead
runs when it starts and after each run."""
CANNOT_START = 3
"""The run process's exit code when the run could not start (``error_file`` says why)."""
REPORT_LOST: dict[str, int] = {"accepted": 20, "rejected": 21, "error": 22, "running": 23}
"""The run process's exit code when the run ended with this verdict but its report could not
be written (a full disk): the exit code needs no disk, so the verdict still reaches the
service."""
VERDICT_OF_CODE = {code: verdict for verdict, code in REPORT_LOST.items()}


@dataclass(frozen=True, slots=True)
class RunJob:
    """One run for a run process: the definition as loaded, where to work and what to write.

    ``copy_from``: make ``workdir`` a copy of this directory first (unless it exists: a
    resumed run keeps its copy). ``resume``: continue the pipeline's state in ``workdir``.
    """

    run_id: str
    definition: Task | Pipeline
    workdir: Path
    copy_from: Path | None
    mode: Mode
    isolation: Isolation
    max_attempts: int
    model: str | None
    timeout: float
    max_cost: float | None
    resume: bool
    events_file: Path
    report_file: Path
    error_file: Path
    """Written instead of the report when the run cannot start."""
    process_log: Path
    model_script: Path | None
    cli_path: str | None
    inputs: dict[str, str] | None = None
    """The values of the definition's inputs (None: it has none)."""
    secrets: tuple[str, ...] = ()
    """Text the run's event log hides besides the environment's secrets (the service's
    token)."""
    recording: Path | None = None
    """The folder the run's recording is written to (None: not recorded)."""
    sandbox: SandboxMode | None = None
    """The service's sandbox switch (``RunOptions.sandbox``; None: as the definition says)."""
