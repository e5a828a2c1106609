"""A confined run's checks are confined as its agent is (phasegate.tasks.run.TaskRun hands
its confinement to the gate's checks): ``sandbox: on`` never runs one unconfined, an optional
sandbox that did not start confines none of them."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from phasegate import Runner, RunReport, Task, judge_transcript
from phasegate.evidence.transcript import AssistantText, Transcript
from phasegate.testing import Script, ScriptedAgent
from tests.helpers.sandboxed import ConfiningAgent, require_bwrap
from tests.helpers.scenarios import NO_RETRIES
from tests.helpers.wild import git

REPLIES: list[dict[str, Any]] = [
    {"tools": [{"Write": {"file_path": "notes.md", "content": "done\n"}}]},
    {"when": "tool_result", "text": "PHASE 1 COMPLETE: done"},
]


def writing_beside(work: Path, sandbox: str) -> Task:
    """A task whose check writes beside the work directory (``ran.txt``) and passes when it
    could, run with ``sandbox``."""
    code = f"open({str(work.parent / 'ran.txt')!r}, 'w').write('x')"
    return Task.model_validate(
        {
            "name": "confined-checks",
            "sandbox": sandbox,
            "phases": [
                {
                    "name": "work",
                    "instructions": "Write notes.md.",
                    "marker": "done",
                    "require_changes": True,
                    "checks": [{"command": [sys.executable, "-c", code]}],
                }
            ],
        }
    )


def run(agent: ScriptedAgent, task: Task, work: Path) -> RunReport:
    """``task`` run once in ``work`` (one gate check: no second chance)."""
    return Runner(agent, max_attempts=1, retry=NO_RETRIES).run_sync(task, work)


def script() -> Script:
    return Script.model_validate({"replies": REPLIES})


@pytest.fixture
def no_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A PATH with no bubblewrap on it (the check's interpreter is named by its path)."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


def test_the_checks_of_a_confined_run_cannot_write_outside_its_work_directory(
    work: Path,
) -> None:
    """The agent was confined, so the gate's check is too: its write beside the work
    directory fails, the check with it, and the file is not there."""
    require_bwrap(work)
    report = run(ConfiningAgent(script()), writing_beside(work, "on"), work)
    assert report.sandbox is not None and report.sandbox.confined
    (check,) = report.phases[0].checks
    assert not check.passed
    assert "Read-only file system" in check.detail
    assert report.verdict == "rejected"
    assert not (work.parent / "ran.txt").exists()


@pytest.mark.usefixtures("no_bwrap")
def test_sandbox_on_without_bubblewrap_fails_the_check_without_running_it(work: Path) -> None:
    """The agent's runtime could confine it, the gate cannot confine its check here: the
    check fails, saying what to install, and its command never ran."""
    report = run(ConfiningAgent(script()), writing_beside(work, "on"), work)
    (check,) = report.phases[0].checks
    assert not check.passed
    assert "could not start: the run is confined (sandbox: on)" in check.detail
    assert "bwrap not found on PATH" in check.detail
    assert not (work.parent / "ran.txt").exists()


@pytest.mark.usefixtures("no_bwrap")
def test_an_optional_sandbox_runs_the_check_unconfined_where_bubblewrap_cannot(
    work: Path,
) -> None:
    """``optional``: the check runs as the agent's commands would have, unconfined."""
    report = run(ConfiningAgent(script()), writing_beside(work, "optional"), work)
    (check,) = report.phases[0].checks
    assert check.passed, check.detail
    assert report.verdict == "accepted"
    assert (work.parent / "ran.txt").exists()


def test_the_checks_of_a_run_whose_optional_sandbox_did_not_start_are_not_confined(
    work: Path,
) -> None:
    """An agent that cannot confine its session runs unconfined under ``optional``, and so
    do the gate's checks, bubblewrap or not."""
    report = run(ScriptedAgent(script()), writing_beside(work, "optional"), work)
    assert report.sandbox is not None and not report.sandbox.confined
    (check,) = report.phases[0].checks
    assert check.passed, check.detail
    assert (work.parent / "ran.txt").exists()


def test_a_judgment_runs_the_checks_of_a_confined_task_confined(work: Path) -> None:
    """No agent ran here, yet the task says sandbox: on: judge confines its checks as the
    task declares, so the write beside the work directory fails and the file is not there."""
    require_bwrap(work)
    git(work, "init", "-q")
    git(work, "commit", "-q", "--allow-empty", "-m", "start")
    (work / "notes.md").write_text("done\n")
    transcript = Transcript(entries=(AssistantText(text="PHASE 1 COMPLETE: done"),))
    report = judge_transcript(writing_beside(work, "on"), transcript, work)
    (check,) = report.phases[0].checks
    assert not check.passed and "Read-only file system" in check.detail
    assert not (work.parent / "ran.txt").exists()
