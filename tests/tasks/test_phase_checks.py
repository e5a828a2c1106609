"""A phase's checks, run by the gate itself: a wrong fix that changed the file is rejected with
the command's own output, a phase accepted early is judged again on the disk the run ends
with, the task's own checks run at the final acceptance, and a check never passes unrun.

Each scenario runs with the in-process scripted agent and with the real Claude Code CLI
against the scripted model server (``agent_kind``)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from phasegate import Runner, RunReport, Task
from phasegate.agents.protocol import Agent
from phasegate.evidence.transcript import AssistantText, Transcript, UserText
from phasegate.evidence.workspace import WorkspaceSnapshot, WorkspaceTimeline
from phasegate.phases.loading import task_from_mapping
from phasegate.tasks.gate import PhaseGate
from phasegate.telemetry.events import RunEvent
from phasegate.testing import Script, ScriptedAgent
from phasegate.testing.pytest_plugin import ScriptedServerFactory
from tests.helpers.processes import gone

CALC = """def add(a, b):
    return a - b


def multiply(a, b):
    return a * b
"""
TESTS = """import unittest

from calc import add, multiply


class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_multiply(self):
        self.assertEqual(multiply(2, 3), 6)
"""
UNITTEST = [sys.executable, "-m", "unittest", "discover", "-s", "tests"]
SUMMARY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["files"],
    "properties": {"files": {"type": "array", "items": {"type": "string"}}},
}


def edit(old: str, new: str) -> dict[str, Any]:
    """An Edit of calc.py."""
    return {"Edit": {"file_path": "calc.py", "old_string": old, "new_string": new}}


MULTIPLY = edit("    return a - b\n", "    return a * b\n")
"""The lazy fix: add() changes, and now multiplies."""
ADD = edit("    return a * b\n\n\ndef multiply", "    return a + b\n\n\ndef multiply")
"""The right fix, after the lazy one."""
ANSWER = '```json\n{"files": ["calc.py"]}\n```'


@pytest.fixture
def calc(tmp_path: Path) -> Path:
    """A project whose add() subtracts, with the author's unittest tests."""
    work = tmp_path / "calc"
    (work / "tests").mkdir(parents=True)
    (work / "calc.py").write_text(CALC)
    (work / "tests" / "test_calc.py").write_text(TESTS)
    return work


def fix_task(**extra: Any) -> Task:
    """Fix add() (its tests are the phase's check), then list the files changed."""
    return task_from_mapping({
        "name": "fix-add",
        "protect": ["tests"],
        "phases": [
            {"name": "fix", "instructions": "Fix add().", "require_changes": True,
             "checks": [{"command": UNITTEST}], **extra},
            {"name": "summary", "instructions": "List the files.",
             "output_schema": SUMMARY_SCHEMA, "claims_files": "files"},
        ],
    })  # fmt: skip


RunIn = Callable[..., tuple[RunReport, list[RunEvent]]]


@pytest.fixture
def run_in(agent_kind: str, scripted_model_server: ScriptedServerFactory) -> RunIn:
    """Run a task in a folder with a model replaying ``replies``: the events and the report."""

    def run(
        task: Task, workdir: Path, replies: list[dict[str, Any]], *, max_attempts: int = 3
    ) -> tuple[RunReport, list[RunEvent]]:
        script = Script.model_validate({"replies": replies})
        agent: Agent = ScriptedAgent(script)
        if agent_kind == "claude":
            agent = scripted_model_server(script).claude_agent(timeout=90, request_timeout=20)
        events: list[RunEvent] = []
        runner = Runner(agent, max_attempts=max_attempts, on_event=events.append)
        return runner.run_sync(task, workdir), events

    return run


def prompts_sent(report: RunReport) -> list[str]:
    """The texts the agent was sent after its first prompt (the gate's feedback)."""
    assert report.transcript is not None
    return [e.text for e in report.transcript.entries if isinstance(e, UserText)][1:]


def check_events(events: list[RunEvent]) -> list[dict[str, Any]]:
    return [e.fields for e in events if e.event == "check.ran"]


def test_a_wrong_fix_is_rejected_with_the_tests_own_output_then_the_right_one_is_accepted(
    calc: Path, run_in: RunIn
) -> None:
    report, events = run_in(fix_task(), calc, [
        {"text": "Fixing add().", "tools": [MULTIPLY]},
        {"when": "tool_result", "text": f"PHASE 1 COMPLETE: done\n{ANSWER}"},
        {"when": "user", "text": "The tests fail. Fixing properly.", "tools": [ADD]},
        {"when": "tool_result", "text": f"PHASE 1 COMPLETE: done\n{ANSWER}"},
    ])  # fmt: skip

    assert report.verdict == "accepted", report.issues
    (feedback,) = prompts_sent(report)
    assert "check_failed" in feedback
    assert "AssertionError: 6 != 5" in feedback  # the command's own output, for the model
    assert "exited with 1" in feedback
    (check,) = report.phases[0].checks
    assert check.passed and check.exit_code == 0 and check.run == 2
    ran = check_events(events)
    assert [(e["phase"], e["passed"], e["exit_code"], e["run"]) for e in ran] == [
        (1, False, 1, 1),
        (1, True, 0, 2),
    ]
    assert report.check_ms == report.phases[0].check_ms == sum(e["duration_ms"] for e in ran)
    assert report.files_changed == ["calc.py"]


def test_a_phase_accepted_early_is_not_accepted_when_a_later_phase_breaks_its_proof(
    calc: Path, run_in: RunIn
) -> None:
    task = task_from_mapping({
        "name": "fix-then-tidy",
        "completion": "tool",
        "phases": [
            {"name": "fix", "instructions": "Fix add().", "checks": [{"command": UNITTEST}]},
            {"name": "tidy", "instructions": "Tidy calc.py.", "require_changes": True},
        ],
    })  # fmt: skip
    report, events = run_in(task, calc, [
        {"text": "Fixing add().", "tools": [edit("    return a - b\n", "    return a + b\n")]},
        {"when": "tool_result", "tools": [{"phase_complete": {"phase": 1}}]},
        # Accepted at the call; the tidying then breaks add() again.
        {"when": "tool_result", "tools": [edit("    return a + b\n", "    return b - a\n")]},
        {"when": "tool_result", "tools": [{"phase_complete": {"phase": 2}}]},
        {"when": "tool_result", "text": "All done."},
    ], max_attempts=1)  # fmt: skip

    assert report.verdict == "rejected"
    first, second = report.phases
    assert first.status == "rejected" and second.status == "accepted"
    assert [i.code.value for i in first.issues] == ["check_failed"]
    assert "AssertionError" in first.issues[0].message
    ran = check_events(events)
    assert (ran[0]["passed"], ran[0]["run"]) == (True, 1)  # at the phase_complete call
    assert ran[-1]["passed"] is False  # on the disk the run ends with


def test_the_tasks_own_checks_run_at_the_final_acceptance_and_fail_the_last_phase(
    calc: Path, run_in: RunIn
) -> None:
    task = task_from_mapping({
        "name": "fix-with-notes",
        "checks": [{"file_exists": "NOTES.md"}],
        "phases": [
            {"name": "fix", "instructions": "Fix add().", "checks": [{"command": UNITTEST}]},
            {"name": "summary", "instructions": "List the files.",
             "output_schema": SUMMARY_SCHEMA},
        ],
    })  # fmt: skip
    report, events = run_in(task, calc, [
        {"text": "Fixing.", "tools": [edit("    return a - b\n", "    return a + b\n")]},
        {"when": "tool_result", "text": f"PHASE 1 COMPLETE: done\n{ANSWER}"},
    ], max_attempts=1)  # fmt: skip

    assert report.verdict == "rejected"
    assert report.phases[0].status == "accepted"
    assert [i.code.value for i in report.phases[1].issues] == ["check_failed"]
    assert "task checks[0] failed: NOTES.md does not exist" in report.phases[1].issues[0].message
    (own,) = report.checks
    assert own.kind == "file_exists" and not own.passed
    assert [e.get("phase") for e in check_events(events)] == [1, None]


def test_checks_are_not_run_again_while_nothing_they_look_at_changed(
    calc: Path, run_in: RunIn
) -> None:
    """The agent stops three times on the same disk: the tests ran once, and that run decided."""
    task = fix_task(require_tools=["Write"])  # never met: each stop is judged again
    report, events = run_in(task, calc, [
        {"text": "Fixing.", "tools": [edit("    return a - b\n", "    return a + b\n")]},
        {"when": "tool_result", "text": f"PHASE 1 COMPLETE: done\n{ANSWER}"},
        {"when": "user", "text": f"PHASE 1 COMPLETE: done\n{ANSWER}"},
        {"when": "user", "text": f"PHASE 1 COMPLETE: done\n{ANSWER}"},
    ])  # fmt: skip

    assert report.verdict == "rejected"
    # A phase with another issue is not checked: its work is not done yet.
    assert check_events(events) == []
    assert report.phases[0].checks == []


@pytest.mark.parametrize("agent_kind", ["scripted"], indirect=True)
def test_a_kept_outcome_decides_while_the_disk_is_unchanged(calc: Path, run_in: RunIn) -> None:
    task = task_from_mapping({
        "name": "fix-and-answer",
        "phases": [
            {"name": "fix", "instructions": "Fix add().", "checks": [{"command": UNITTEST}]},
            {"name": "summary", "instructions": "List the files.",
             "output_schema": SUMMARY_SCHEMA},
        ],
    })  # fmt: skip
    report, events = run_in(task, calc, [
        {"text": "Fixing.", "tools": [edit("    return a - b\n", "    return a + b\n")]},
        {"when": "tool_result", "text": "PHASE 1 COMPLETE: done\nno json yet"},
        {"when": "user", "text": ANSWER},
    ])  # fmt: skip

    assert report.verdict == "accepted", report.issues
    assert report.attempts == 2
    (ran,) = check_events(events)  # judged twice on the same disk, run once
    assert ran["run"] == 1 and report.phases[0].checks[0].run == 1


def test_a_gate_that_cannot_run_checks_never_takes_them_as_passed() -> None:
    task = task_from_mapping({
        "name": "fix",
        "phases": [{"name": "fix", "instructions": "Fix.", "checks": [{"file_exists": "a"}]}],
    })  # fmt: skip
    timeline = WorkspaceTimeline.of([(0, WorkspaceSnapshot())])
    transcript = Transcript(entries=(AssistantText(text="PHASE 1 COMPLETE: done"),))
    judgment = PhaseGate(task, workdir="/nowhere").judge(transcript, timeline)
    assert [i.code.value for i in judgment.issues] == ["check_not_run"]
    assert "not run" in judgment.issues[0].message


def test_files_a_check_writes_are_never_the_agents_work(calc: Path, run_in: RunIn) -> None:
    """The check leaves a cache folder and a coverage file, one inside a protected folder."""
    writer = (
        "import pathlib; pathlib.Path('.pytest_cache').mkdir(exist_ok=True); "
        "pathlib.Path('.pytest_cache/v').write_text('x'); "
        "pathlib.Path('.coverage').write_text('data'); "
        "pathlib.Path('tests/.cache').write_text('x')"
    )
    task = fix_task(checks=[{"command": UNITTEST}, {"command": [sys.executable, "-c", writer]}])
    report, _ = run_in(task, calc, [
        {"text": "Fixing.", "tools": [edit("    return a - b\n", "    return a + b\n")]},
        {"when": "tool_result", "text": f"PHASE 1 COMPLETE: done\n{ANSWER}"},
    ])  # fmt: skip

    assert report.verdict == "accepted", report.issues
    assert (calc / ".coverage").exists() and (calc / "tests" / ".cache").exists()
    assert report.files_changed == ["calc.py"]
    assert report.phases[0].files_changed == ["calc.py"]
    assert report.reconciliation is not None
    assert report.reconciliation.disk_changed == ["calc.py"]


def test_a_run_that_ends_while_a_check_runs_ends_the_checks_command_too(
    calc: Path, tmp_path: Path
) -> None:
    """The run's time limit falls inside a check that would run for minutes: the run ends in
    error at once, the command (and what it started) is gone, and the check never passed."""
    pid_file = tmp_path / "pid"
    slow = (
        "import os, subprocess, sys, time; "
        f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)']); "
        f"open({str(pid_file)!r}, 'w').write(f'{{os.getpid()}} {{child.pid}}'); time.sleep(300)"
    )
    task = fix_task(checks=[{"command": {"argv": [sys.executable, "-c", slow], "timeout": 600}}])
    script = Script.model_validate({"replies": [
        {"text": "Fixing.", "tools": [edit("    return a - b\n", "    return a + b\n")]},
        {"when": "tool_result", "text": f"PHASE 1 COMPLETE: done\n{ANSWER}"},
    ]})  # fmt: skip
    report = Runner(ScriptedAgent(script), timeout=3).run_sync(task, calc)

    assert report.verdict == "error"
    pids = [int(pid) for pid in pid_file.read_text().split()]
    assert all(gone(pid) for pid in pids)
    assert report.phases[0].status != "accepted"
    assert [i.code.value for i in report.phases[0].issues] == ["check_failed"]
    assert "stopped: the run ended while it ran" in report.phases[0].issues[0].message
