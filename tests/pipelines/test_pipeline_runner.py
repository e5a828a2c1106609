"""The pipeline runner: stages handed over by the Stop hook, gated on their exit checks.

Every scenario runs twice: with the in-process scripted agent, and with the real Claude Code
CLI against the scripted model server (``cli`` marker), from the same script.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from phasegate.agents.retry import RetryPolicy
from phasegate.phases.pipeline import Pipeline
from phasegate.pipelines.runner import PipelineRunner
from phasegate.pipelines.state import load_state
from phasegate.telemetry.events import RunEvent
from phasegate.testing import Script, ScriptedAgent
from tests.helpers.pipelines import FinishedPipeline
from tests.helpers.processes import gone

RunPipeline = Callable[..., FinishedPipeline]


def _write(path: str, lines: int, word: str = "line") -> dict[str, Any]:
    content = "".join(f"{word} {n}\n" for n in range(1, lines + 1))
    return {"Write": {"file_path": path, "content": content}}


THREE_STAGES: dict[str, Any] = {
    "name": "three",
    "stages": [
        {"name": "spec", "prompt": "Write spec.md.", "exit_when": [{"file_exists": "spec.md"}]},
        {
            "name": "plan",
            "prompt": "Write plan.md, at least 5 lines.",
            "exit_when": [{"min_lines": {"path": "plan.md", "n": 5}}, {"changed": "*.md"}],
        },
        {
            "name": "build",
            "prompt": "Write build.txt.",
            "exit_when": [{"file_exists": "build.txt"}, {"tools_used": ["Write", "Edit"]}],
        },
    ],
}

HAPPY_REPLIES: list[dict[str, Any]] = [
    {"contains": "Stage 1 of 3: spec", "tools": [_write("spec.md", 2)]},
    {"when": "tool_result", "text": "Spec written."},
    {"contains": "Stage 2 of 3: plan", "tools": [_write("plan.md", 6)]},
    {"when": "tool_result", "text": "Plan written."},
    {"contains": "Stage 3 of 3: build", "tools": [_write("build.txt", 1)]},
    {"when": "tool_result", "text": "Built."},
]


def test_every_stage_passes_in_one_session_handed_over_by_the_stop_hook(
    run_pipeline: RunPipeline, agent_kind: str
) -> None:
    """Three stages, one session: each stop checks the stage and injects the next prompt."""
    run = run_pipeline(THREE_STAGES, HAPPY_REPLIES)
    report = run.report
    assert report.verdict == "accepted" and report.exit_code == 0
    assert report.sessions == 1
    assert [(s.name, s.status, s.attempts, s.visits) for s in report.stages] == [
        ("spec", "accepted", 1, 1),
        ("plan", "accepted", 1, 1),
        ("build", "accepted", 1, 1),
    ]
    assert report.stages[1].files_changed == ["plan.md"]
    assert report.stages[2].tools == {"Write": 1}
    assert all(check.ok for stage in report.stages for check in stage.checks)
    if agent_kind == "claude":
        headers = ["Stage 1 of 3: spec", "Stage 2 of 3: plan", "Stage 3 of 3: build"]
        assert len(run.instructions) == 3
        assert all(h in text for h, text in zip(headers, run.instructions, strict=True))
    names = [e.event for e in run.events if e.event.startswith(("stage.", "pipeline."))]
    assert names == [
        "pipeline.started",
        "stage.started",
        "stage.checked",
        "stage.completed",
        "stage.started",
        "stage.checked",
        "stage.completed",
        "stage.started",
        "stage.checked",
        "stage.completed",
        "pipeline.completed",
    ]
    state = load_state(run.workdir)
    assert state.status == "accepted" and state.stage == 2


def test_a_failed_exit_check_blocks_the_stop_with_feedback_and_passes_once_fixed(
    run_pipeline: RunPipeline, agent_kind: str
) -> None:
    """plan.md with 2 of 5 lines: the feedback says so, the model fixes it, the stage passes."""
    replies = [
        *HAPPY_REPLIES[:2],
        {"contains": "Stage 2 of 3: plan", "tools": [_write("plan.md", 2)]},
        {"when": "tool_result", "text": "Plan written."},
        # Only feedback that names the failed check and what was found gets this reply.
        {"when": "user", "contains": "plan.md has 2 lines", "tools": [_write("plan.md", 7)]},
        {"when": "tool_result", "text": "Plan extended."},
        *HAPPY_REPLIES[4:],
    ]
    run = run_pipeline(THREE_STAGES, replies)
    report = run.report
    assert report.verdict == "accepted"
    plan = report.stages[1]
    assert (plan.attempts, plan.visits) == (2, 1)
    failed = [e.fields for e in run.events if e.event == "stage.checked" and not e.fields["passed"]]
    assert failed == [
        {
            "stage": 2,
            "name": "plan",
            "attempt": 1,
            "trigger": "stop",
            "passed": False,
            "failed": ["min_lines"],
        }
    ]
    if agent_kind == "claude":
        feedback = run.instructions[2]
        assert "exit_condition_failed" in feedback and "2 attempt(s) left" in feedback


REVISION: dict[str, Any] = {
    "name": "revise",
    "stages": [
        {
            "name": "architect",
            "prompt": "Write spec.md.",
            "exit_when": [{"file_exists": "spec.md"}],
        },
        {
            "name": "implement",
            "prompt": "Implement spec.md.",
            "exit_when": [
                {
                    "command": {
                        "argv": [
                            "python3",
                            "-c",
                            "import sys; sys.exit('v2' not in open('spec.md').read())",
                        ]
                    }
                }
            ],
            "on_fail": {"retry": 0, "back_to": "architect"},
        },
    ],
}


def test_back_to_sends_the_pipeline_to_an_earlier_stage_with_the_failure(
    run_pipeline: RunPipeline, agent_kind: str
) -> None:
    """implement cannot pass with spec v1: architect revises it, then implement passes."""
    replies = [
        {"contains": "Stage 1 of 2: architect", "tools": [_write("spec.md", 1, "v1")]},
        {"when": "tool_result", "text": "Spec v1."},
        {"contains": "Stage 2 of 2: implement", "text": "Nothing to change."},
        {"contains": "goes back to stage architect", "tools": [_write("spec.md", 1, "v2")]},
        {"when": "tool_result", "text": "Spec v2."},
        {"contains": "Stage 2 of 2: implement", "text": "Implemented."},
    ]
    run = run_pipeline(REVISION, replies)
    report = run.report
    assert report.verdict == "accepted"
    assert [(s.name, s.visits, s.attempts) for s in report.stages] == [
        ("architect", 2, 2),
        ("implement", 2, 2),
    ]
    (revision,) = report.revisions
    assert (revision.from_stage, revision.to_stage) == ("implement", "architect")
    (failure,) = revision.failures
    assert failure.startswith("command: ") and "exited with 1" in failure
    started = [
        (e.fields["name"], e.fields["visit"]) for e in run.events if e.event == "stage.started"
    ]
    assert started == [("architect", 1), ("implement", 1), ("architect", 2), ("implement", 2)]
    if agent_kind == "claude":
        assert "exit_condition_failed" in run.instructions[2]


def test_a_stage_that_keeps_failing_is_rejected_after_its_bounded_retries_and_revisions(
    run_pipeline: RunPipeline,
) -> None:
    """retry 1 and one revision allowed: 2 checks, revise, 2 checks again, then rejected."""
    pipeline = {**REVISION, "max_revisions": 1}
    pipeline["stages"] = [
        REVISION["stages"][0],
        {**REVISION["stages"][1], "on_fail": {"retry": 1, "back_to": "architect"}},
    ]
    replies = [
        {"contains": "Stage 1 of 2: architect", "tools": [_write("spec.md", 1, "v1")]},
        {"when": "tool_result", "text": "Spec v1."},
        {"text": "I will not change anything."},
        {"text": "Still nothing."},
        {"text": "Nothing."},
        {"text": "Nothing at all."},
        {"text": "No."},
    ]
    run = run_pipeline(pipeline, replies)
    report = run.report
    assert report.verdict == "rejected" and report.exit_code == 1
    assert [(s.name, s.status, s.visits, s.attempts) for s in report.stages] == [
        ("architect", "accepted", 2, 2),
        ("implement", "rejected", 2, 4),
    ]
    assert len(report.revisions) == 1
    assert load_state(run.workdir).status == "rejected"


def test_process_isolation_runs_each_stage_in_its_own_session(run_pipeline: RunPipeline) -> None:
    """The old way, for comparison: same verdicts, one session per stage."""
    run = run_pipeline(THREE_STAGES, HAPPY_REPLIES, isolation="process")
    assert run.report.verdict == "accepted"
    assert run.report.isolation == "process"
    assert run.report.sessions == 3
    assert all(s.attempts == 1 for s in run.report.stages)


TASK_STAGE: dict[str, Any] = {
    "name": "with-task",
    "stages": [
        {
            "name": "fix",
            "task": {
                "name": "write-notes",
                "phases": [
                    {
                        "name": "write",
                        "instructions": "Write notes.md.",
                        "marker": "Notes written",
                        "require_tools": ["Write"],
                        "require_changes": True,
                    }
                ],
            },
            "exit_when": [{"file_exists": "notes.md"}],
        }
    ],
}


def test_a_stage_running_a_phased_task_is_gated_by_the_phase_validators_too(
    run_pipeline: RunPipeline, agent_kind: str
) -> None:
    """A marker claimed before any Write fails the task gate; the phase feedback goes back."""
    replies = [
        {"contains": "Stage 1 of 1: fix", "text": "PHASE 1 COMPLETE: Notes written"},
        {"when": "user", "contains": "tool_not_used", "tools": [_write("notes.md", 3)]},
        {"when": "tool_result", "text": "PHASE 1 COMPLETE: Notes written"},
    ]
    run = run_pipeline(TASK_STAGE, replies)
    report = run.report
    assert report.verdict == "accepted", report.model_dump_json(indent=2)
    (stage,) = report.stages
    assert stage.attempts == 2
    assert [c.kind for c in stage.checks] == ["file_exists", "task"]
    first = next(e for e in run.events if e.event == "stage.checked")
    assert first.fields["failed"] == ["file_exists", "task"]
    if agent_kind == "claude":
        assert "PHASE 1 COMPLETE: Notes written" in run.instructions[0]
        # The stage and its task's gate count the same checks down.
        assert run.instructions[1].count("(2 attempt(s) left)") == 2, run.instructions[1]


def test_the_state_file_is_whole_at_every_event_of_a_run(run_pipeline: RunPipeline) -> None:
    """Read back at every event, the state always parses and matches the stage in the event."""
    workdirs: list[Path] = []
    seen: list[str] = []

    def read_state(event: RunEvent) -> None:
        if event.event == "pipeline.started":
            workdirs.append(Path(event.fields["workdir"]))
        elif event.event.startswith("stage."):
            state = load_state(workdirs[0])
            assert state.stage + 1 == event.fields["stage"]
            seen.append(event.event)

    run = run_pipeline(THREE_STAGES, HAPPY_REPLIES, on_event=read_state)
    assert run.report.verdict == "accepted"
    assert len(seen) == 9


def _scripted_run(replies: list[dict[str, Any]], work: Path) -> tuple[Any, list[RunEvent]]:
    """THREE_STAGES with the in-process agent and real (fast) retries."""
    events: list[RunEvent] = []
    agent = ScriptedAgent(Script.model_validate({"replies": replies}))
    retry = RetryPolicy(session_retries=1, initial_delay=0.01, max_delay=0.01)
    runner = PipelineRunner(agent, on_event=events.append, retry=retry)
    return runner.run_sync(Pipeline.model_validate(THREE_STAGES), work), events


def test_a_transient_failure_mid_stage_continues_the_session_with_a_recap(
    tmp_path: Path,
) -> None:
    """The retry resumes the same session, told where the run stands; no stage is redone."""
    recap = "an infrastructure failure: scripted model failure: HTTP 500"
    replies = [
        *HAPPY_REPLIES[:2],
        {"contains": "Stage 2 of 3: plan", "error": {"status": 500}},
        {"contains": recap, "tools": [_write("plan.md", 6)]},
        *HAPPY_REPLIES[3:],
    ]
    report, events = _scripted_run(replies, tmp_path)
    assert report.verdict == "accepted", report.error
    retries = [e.fields for e in events if e.event == "retry.scheduled"]
    assert [(r["source"], r["reason"]) for r in retries] == [
        ("phasegate", "scripted model failure: HTTP 500")
    ]
    assert [s.visits for s in report.stages] == [1, 1, 1]


def test_the_report_names_the_latest_session_and_the_models_last_word(
    run_pipeline: RunPipeline, agent_kind: str
) -> None:
    report = run_pipeline(THREE_STAGES, HAPPY_REPLIES).report

    assert report.final_message == "Built."
    assert report.session_id is not None
    if agent_kind == "scripted":
        assert report.session_id == "scripted"


def test_a_stage_tasks_phase_checks_are_run_by_its_gate_with_their_events(
    run_pipeline: RunPipeline,
) -> None:
    """notes.md must have 3 lines: a shorter one fails the phase's check, the feedback says
    so, and the check runs again (a check.ran event each, under the stage) once it is longer."""
    checked = copy.deepcopy(TASK_STAGE)
    checked["stages"][0]["task"]["phases"][0]["checks"] = [{"min_lines": {"path": "notes.md",
                                                                          "n": 3}}]  # fmt: skip
    replies = [
        {"contains": "Stage 1 of 1: fix", "tools": [_write("notes.md", 1)]},
        {"when": "tool_result", "text": "PHASE 1 COMPLETE: Notes written"},
        {"when": "user", "contains": "check_failed", "tools": [_write("notes.md", 3)]},
        {"when": "tool_result", "text": "PHASE 1 COMPLETE: Notes written"},
    ]
    run = run_pipeline(checked, replies)
    assert run.report.verdict == "accepted", run.report.model_dump_json(indent=2)
    ran = [e.fields for e in run.events if e.event == "check.ran"]
    assert [(e["stage"], e["phase"], e["kind"], e["passed"]) for e in ran] == [
        (1, 1, "min_lines", False),
        (1, 1, "min_lines", True),
    ]


def test_a_pipeline_that_ends_while_an_exit_check_runs_ends_the_checks_command_too(
    tmp_path: Path,
) -> None:
    """The pipeline's time limit falls inside a stage's exit check that would run for
    minutes: the run ends at once and the command, with what it started, is gone."""
    pid_file = tmp_path / "pid"
    slow = (
        "import os, subprocess, sys, time; "
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)']); "
        f"open({str(pid_file)!r}, 'w').write(f'{{os.getpid()}} {{child.pid}}'); time.sleep(300)"
    )
    pipeline = Pipeline.model_validate({"name": "slow", "stages": [{
        "name": "only", "prompt": "Write notes.md.",
        "exit_when": [{"command": {"argv": [sys.executable, "-c", slow], "timeout": 600}}],
    }]})  # fmt: skip
    replies = [{"tools": [_write("notes.md", 1)]}, {"when": "tool_result", "text": "Done."}]
    script = Script.model_validate({"replies": replies})
    work = tmp_path / "work"
    work.mkdir()
    report = PipelineRunner(ScriptedAgent(script), timeout=3).run_sync(pipeline, work)

    assert report.verdict != "accepted"
    assert all(gone(int(pid)) for pid in pid_file.read_text().split())
