"""Files a command reads that are not what they should be: a FIFO with no writer, an endless
device, a kept result edited by hand, a log file that is also an input. Each ends in exit 2
with a message naming the file and what is wrong: no hang, no traceback, nothing changed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers.inputs import planned_ci_task

FIFO = "is a FIFO (named pipe), not a regular file"


def phasegate(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """The CLI in a subprocess, given 30 seconds: a read that blocks fails the test."""
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def refused(done: subprocess.CompletedProcess[str], *words: str) -> None:
    """Exit 2, each of ``words`` in the message, no traceback."""
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    for word in words:
        assert word in done.stderr, done.stderr


@pytest.fixture
def script(tmp_path: Path) -> Path:
    """A scripted agent that says the loop's promise."""
    path = tmp_path / "script.yaml"
    path.write_text(yaml.safe_dump({"replies": [{"text": "<promise>DONE</promise>"}]}))
    return path


def pagent_file(work: Path) -> Path:
    """A pagent pipeline in ``work`` whose one stage reads ``prompt.md``."""
    (work / ".claude").mkdir()
    path = work / ".claude" / "pagent-pipeline.json"
    stage = {"name": "a", "prompt_file": "prompt.md", "exit_when": {"file_exists": "a.md"}}
    path.write_text(
        json.dumps({"stage": "a", "max_stages": 0, "iterations": {}, "stages": [stage]})
    )
    return path


def test_a_pagent_prompt_file_that_is_a_fifo_is_refused(work: Path, script: Path) -> None:
    os.mkfifo(work / "prompt.md")
    done = phasegate("pipeline", "run", pagent_file(work), "--workdir", work, "--agent",
                     "scripted", "--script", script)  # fmt: skip
    refused(done, "prompt.md", FIFO)


def test_a_fifo_as_the_pipeline_state_makes_resume_refuse_it(work: Path, script: Path) -> None:
    (work / "prompt.md").write_text("Write a.md.\n")
    (work / ".phasegate").mkdir()
    os.mkfifo(work / ".phasegate" / "pipeline-state.json")
    done = phasegate("pipeline", "resume", pagent_file(work), "--workdir", work, "--agent",
                     "scripted", "--script", script)  # fmt: skip
    refused(done, "pipeline-state.json", FIFO)


def test_a_fifo_as_the_pipeline_state_makes_a_fresh_loop_refuse_to_replace_it(
    work: Path, script: Path
) -> None:
    (work / ".phasegate").mkdir()
    os.mkfifo(work / ".phasegate" / "pipeline-state.json")
    done = phasegate("loop", "Finish.", "--promise", "DONE", "--workdir", work, "--agent",
                     "scripted", "--script", script)  # fmt: skip
    refused(done, "pipeline-state.json", FIFO, "start over anyway")


def test_a_loop_prompt_file_that_never_ends_is_refused(work: Path, script: Path) -> None:
    """`--prompt-file /dev/zero` used to read until the memory ran out."""
    done = phasegate("loop", "--prompt-file", "/dev/zero", "--promise", "DONE", "--workdir",
                     work, "--agent", "scripted", "--script", script)  # fmt: skip
    refused(done, "--prompt-file /dev/zero", "is a character device, not a regular file")


def test_a_ralph_state_file_that_is_a_fifo_is_refused(work: Path, script: Path) -> None:
    os.mkfifo(work / "ralph-loop.local.md")
    done = phasegate("loop", "--state", work / "ralph-loop.local.md", "--workdir", work,
                     "--agent", "scripted", "--script", script)  # fmt: skip
    refused(done, "ralph-loop.local.md", FIFO)


def test_a_report_for_github_that_is_a_fifo_is_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "report.json")
    refused(phasegate("github", tmp_path / "report.json"), "report.json", FIFO)


def test_a_task_file_that_is_a_fifo_is_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "task.yaml")
    refused(phasegate("check", tmp_path / "task.yaml"), "task.yaml", FIFO)


@pytest.fixture
def planned(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """The task file, the project, its plan, and a scripted model that marks the phase."""
    return planned_ci_task(tmp_path)


def execute(planned: tuple[Path, Path, Path, Path], *args: str | Path) -> list[str | Path]:
    task, project, plan, model = planned
    return ["execute", task, "--workdir", project, "--plan", plan, "--agent", "scripted",
            "--script", model, *args]  # fmt: skip


def test_execute_answers_from_a_fifo_are_refused(
    planned: tuple[Path, Path, Path, Path], tmp_path: Path
) -> None:
    os.mkfifo(tmp_path / "answers.json")
    done = phasegate(*execute(planned, "--responses", f"@{tmp_path / 'answers.json'}"))
    refused(done, "answers.json", FIFO)


def test_a_kept_execute_result_edited_by_hand_is_refused_naming_the_file(
    planned: tuple[Path, Path, Path, Path],
) -> None:
    """`"exit": "zero"` in a kept result used to end in a ValueError traceback."""
    answers = json.dumps({"target": "Fly.io", "team": "core"})
    command = execute(planned, "--responses", answers, "--idempotency-key", "k")
    first = phasegate(*command)
    assert first.returncode == 0, first.stdout + first.stderr
    (kept,) = (planned[1] / ".phasegate" / "executions").glob("*.json")
    record = json.loads(kept.read_text())
    record["answer"]["exit"] = "zero"
    kept.write_text(json.dumps(record))
    again = phasegate(*command)
    refused(again, str(kept), "exit is 'zero'", "delete the file to run again")
    assert json.loads(again.stdout.splitlines()[-1])["success"] is False


def test_a_log_file_that_is_the_answers_file_is_refused_and_the_answers_kept(
    planned: tuple[Path, Path, Path, Path], tmp_path: Path
) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"target": "Fly.io", "team": "core"}))
    before = answers.read_bytes()
    done = phasegate(*execute(planned, "--responses", f"@{answers}", "--log-file", answers))
    refused(done, f"--log-file {answers}", "log to another file")
    assert answers.read_bytes() == before


def test_a_log_file_that_is_a_pagent_prompt_file_is_refused_and_the_prompt_kept(
    work: Path, script: Path
) -> None:
    prompt = work / "prompt.md"
    prompt.write_text("Write a.md.\n")
    done = phasegate("pipeline", "run", pagent_file(work), "--workdir", work, "--agent",
                     "scripted", "--script", script, "--log-file", prompt)  # fmt: skip
    refused(done, f"--log-file {prompt}", "log to another file")
    assert prompt.read_text() == "Write a.md.\n"
