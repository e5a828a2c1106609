"""A real run of a task with checks: ``examples/prove-the-fix`` through the runner, offline.

The scripted model breaks ``add()`` in another way first, so the author's tests (the phase's
check, run by the gate) fail once, then pass. The report, the event log and the recording are
what the views of checks are built from, so their tests read a real one.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from phasegate.phases.loading import load_task
from phasegate.tasks.report import RunReport
from phasegate.tasks.runner import Runner
from phasegate.telemetry.log import EventLog
from phasegate.testing import ScriptedAgent, load_script

EXAMPLE = Path(__file__).parents[2] / "examples" / "prove-the-fix"


@dataclass(frozen=True, slots=True)
class CheckedRun:
    """What the run left: its report, its event log and its recording folder."""

    report: RunReport
    log: Path
    recording: Path


def prove_the_fix(folder: Path) -> CheckedRun:
    """Run the example in a copy of its project under ``folder``, logged and recorded there."""
    workdir = folder / "project"
    shutil.copytree(EXAMPLE / "project", workdir)
    log_file, recording = folder / "events.jsonl", folder / "recording"
    agent = ScriptedAgent(load_script(EXAMPLE / "model.yaml"))
    with EventLog(file=log_file) as log:
        report = Runner(agent, on_event=log).run_sync(
            load_task(EXAMPLE / "task.yaml"), workdir, record=recording
        )
    return CheckedRun(report, log_file, recording)
