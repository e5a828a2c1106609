"""A confined pipeline's exit checks are confined as its agent is (the run hands its
confinement to the stages' checks)."""

from __future__ import annotations

import sys
from pathlib import Path

from phasegate.phases.pipeline import Pipeline
from phasegate.pipelines.runner import PipelineRunner
from phasegate.testing import Script
from tests.helpers.sandboxed import ConfiningAgent, require_bwrap
from tests.helpers.scenarios import NO_RETRIES


def test_a_confined_pipeline_s_exit_check_cannot_write_outside_the_work_directory(
    work: Path,
) -> None:
    """The stage's command check writes beside the work directory: the write fails, the
    stage with it, and the file is not there."""
    require_bwrap(work)
    outside = work.parent / "ran.txt"
    pipeline = Pipeline.model_validate(
        {
            "name": "confined",
            "sandbox": "on",
            "stages": [
                {
                    "name": "only",
                    "prompt": "Do nothing.",
                    "exit_when": [
                        {
                            "command": [
                                sys.executable,
                                "-c",
                                f"open({str(outside)!r}, 'w').write('x')",
                            ]
                        }
                    ],
                    "on_fail": {"retry": 0},
                }
            ],
        }
    )
    agent = ConfiningAgent(Script.model_validate({"replies": [{"text": "Nothing to do."}]}))
    report = PipelineRunner(agent, retry=NO_RETRIES).run_sync(pipeline, work)
    assert report.sandbox is not None and report.sandbox.confined
    assert report.verdict == "rejected"
    (check,) = report.stages[0].checks
    assert not check.ok
    assert "Read-only file system" in check.detail
    assert not outside.exists()
