"""What a pipeline test run leaves behind (built by the ``run_pipeline`` fixture)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from phasegate import RunEvent
from phasegate.pipelines.report import PipelineReport


@dataclass
class PipelineRun:
    """What a pipeline run left behind: its report, events, the model's instructions."""

    report: PipelineReport
    events: list[RunEvent]
    instructions: list[str]
    """Each instruction the model received (first prompt, feedback, next stages), in order;
    only recorded when the real CLI ran (the server sees them)."""
    workdir: Path
