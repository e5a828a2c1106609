"""What the commands print (phasegate._cli.output): counts read as English."""

from __future__ import annotations

import pytest

from phasegate._cli.output import format_pipeline, progress_line
from phasegate.evidence.transcript import SandboxBlocked
from phasegate.phases.pipeline import pipeline_from_mapping
from phasegate.pipelines.report import PipelineReport
from phasegate.pipelines.state import stage_records
from phasegate.telemetry.events import (
    AttemptBlocked,
    PipelineStarted,
    RunEvent,
    RunStarted,
    ToolCalled,
)


@pytest.mark.parametrize(("phases", "words"), [(1, "1 phase,"), (2, "2 phases,")])
def test_the_start_line_of_a_run_counts_its_phases_in_the_singular_for_one(
    phases: int, words: str
) -> None:
    """A one-phase task starts with "1 phase", never "1 phase(s)" or "1 phases"."""
    data = RunStarted(agent="scripted", workdir="/w", phases=phases, max_attempts=3)

    line = progress_line(RunEvent(data=data, run_id="r", task="fix", mode="gate"))

    assert line == f"▶ fix: {words} mode gate, agent scripted"


def test_the_start_line_of_a_pipeline_counts_one_stage_in_the_singular() -> None:
    """A one-stage pipeline starts with "1 stage"."""
    data = PipelineStarted(agent="scripted", workdir="/w", stages=1, stage=1, resumed=False)

    line = progress_line(RunEvent(data=data, run_id="r", task="p", mode="gate"))

    assert line == "▶ p: 1 stage, starting at stage 1, agent scripted"


def test_the_start_lines_name_the_agents_version_when_it_is_known() -> None:
    """``agent claude 2.1.332``: which Claude Code ran is in the first line a person reads."""
    run = RunStarted(agent="claude", agent_version="2.1.332", workdir="/w", phases=2,
                     max_attempts=3)  # fmt: skip
    pipeline = PipelineStarted(
        agent="claude", agent_version="2.1.332", workdir="/w", stages=2, stage=1, resumed=False
    )

    run_line = progress_line(RunEvent(data=run, run_id="r", task="fix", mode="gate"))
    pipeline_line = progress_line(RunEvent(data=pipeline, run_id="r", task="p", mode="gate"))

    assert run_line == "▶ fix: 2 phases, mode gate, agent claude 2.1.332"
    assert pipeline_line == "▶ p: 2 stages, starting at stage 1, agent claude 2.1.332"


def test_each_blocked_attempt_has_a_line_saying_what_was_kept_in() -> None:
    """What a person watching a confined run sees the moment the sandbox keeps a call in."""
    entry = SandboxBlocked(blocked="host", tool="Bash", tool_use_id="t", target="example.com:443",
                           detail="deny network-outbound example.com:443")  # fmt: skip
    data = AttemptBlocked.of(entry, phase=1)

    line = progress_line(RunEvent(data=data, run_id="r", task="fix", mode="gate"))

    assert line == "  ⊘ blocked by the sandbox (host): Bash example.com:443"


def test_a_branchs_progress_lines_name_it_since_branches_interleave() -> None:
    """Branches run at once: a tool line says which branch called it; a plain pipeline's
    lines stay as they are."""
    data = ToolCalled(stage=3, tool="Write", tool_use_id="t1", ok=True)

    in_branch = progress_line(RunEvent(data, "r", "p", "gate", branch="backend"))
    plain = progress_line(RunEvent(data, "r", "p", "gate"))

    assert (in_branch, plain) == ("  · Write ok [branch backend]", "  · Write ok")


def report_of(*stages: dict[str, object]) -> PipelineReport:
    """The report of a pipeline holding ``stages`` that has not run."""
    pipeline = pipeline_from_mapping({"name": "p", "stages": [
        {"prompt": "Go.", "exit_when": [{"file_exists": "x"}], **stage} for stage in stages
    ]})  # fmt: skip
    return PipelineReport(
        pipeline="p", run_id="r", agent="scripted", isolation="session", verdict="running",
        success=False, stages=tuple(stage_records(pipeline)), sessions=0, duration_ms=0,
        state_file="s",
    )  # fmt: skip


def test_the_printed_report_names_each_stage_s_branch_when_there_are_several() -> None:
    """plan, then api and web forked from it: each stage line says its branch."""
    text = format_pipeline(
        report_of({"name": "plan"}, {"name": "api", "needs": ["plan"]},
                  {"name": "web", "needs": ["plan"]})
    )  # fmt: skip

    lines = [line for line in text.splitlines() if line.startswith("  stage ")]
    assert [line.split(":")[0] for line in lines] == [
        "  stage 1 plan [branch plan]",
        "  stage 2 api [branch api]",
        "  stage 3 web [branch web]",
    ]


def test_the_printed_report_of_a_sequential_pipeline_names_no_branch() -> None:
    """One branch: the lines read as they always have."""
    text = format_pipeline(report_of({"name": "a"}, {"name": "b"}))

    assert "  stage 2 b: pending after 0 check(s)" in text
    assert "branch" not in text
