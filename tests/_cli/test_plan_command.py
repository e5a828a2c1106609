"""``phasegate plan`` as a user runs it: a process, JSON on stdout, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.helpers.cli import phasegate
from tests.helpers.inputs import CI_TASK, python_project, snapshot


@pytest.fixture
def task_file(tmp_path: Path) -> Path:
    """The CI task as a YAML file."""
    path = tmp_path / "task.yaml"
    path.write_text(yaml.safe_dump(CI_TASK))
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A Python project the CI task infers four inputs from."""
    return python_project(tmp_path / "project")


def test_two_processes_print_the_same_bytes_and_leave_the_disk_unchanged(
    task_file: Path, project: Path, tmp_path: Path
) -> None:
    """Same call, two processes: identical stdout; the work directory is as it was."""
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"answers": {"Where should it deploy?": "AWS"}}))
    before = snapshot(project)
    args = ("plan", task_file, "--workdir", project, "--responses", f"@{answers}")

    first, second = phasegate(*args), phasegate(*args)

    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    assert snapshot(project) == before
    plan = json.loads(first.stdout)
    assert plan["status"] == "needs_answers"
    assert plan["missing_info"] == ["team"]
    assert [q["id"] for q in plan["questions"]] == ["team"]
    assert list(plan) == sorted(plan)


def test_a_pipeline_file_is_planned_too(tmp_path: Path, project: Path) -> None:
    """Stage prompts use the pipeline's inputs; the plan says kind pipeline."""
    path = tmp_path / "pipeline.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "p",
                "inputs": [
                    {
                        "id": "language",
                        "question": "Which language?",
                        "header": "Language",
                        "infer": [{"detect": "language"}],
                    }
                ],
                "stages": [
                    {
                        "name": "s",
                        "prompt": "Write docs for the {{ language }} code.",
                        "exit_when": [{"file_exists": "DOCS.md"}],
                    }
                ],
            }
        )
    )
    result = phasegate("plan", path, "--workdir", project)
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)
    assert (plan["kind"], plan["status"], plan["progress"]) == ("pipeline", "ready", 1.0)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--responses", "{not json"), "--responses"),
        (("--context", "[1, 2]"), "--context"),
        (("--responses", "@/nonexistent/answers.json"), "cannot read it"),
        (("--questions-per-turn", "3"), "--questions-per-turn"),
    ],
)
def test_bad_arguments_exit_2_with_a_message_naming_the_option(
    task_file: Path, project: Path, args: tuple[str, ...], expected: str
) -> None:
    """No traceback: one line naming what to fix."""
    result = phasegate("plan", task_file, "--workdir", project, *args)
    assert result.returncode == 2
    assert expected in result.stderr
    assert "Traceback" not in result.stderr


def test_a_task_with_an_unknown_placeholder_exits_2_naming_file_and_field(
    tmp_path: Path, project: Path
) -> None:
    """The load-time check, through the command (it applies to a task declaring inputs)."""
    path = tmp_path / "task.yaml"
    path.write_text(
        "name: t\nphases: [{name: w, instructions: 'Use {{ nope }} in {{ lang }}'}]\n"
        "inputs: [{id: lang, question: Which language, header: Language}]\n"
    )
    result = phasegate("plan", path, "--workdir", project)
    assert result.returncode == 2
    assert f"{path}: phases.0.instructions: {{{{ nope }}}} names no input" in result.stderr


def test_a_task_whose_conditions_form_a_cycle_exits_2_naming_file_input_and_field(
    tmp_path: Path, project: Path
) -> None:
    path = tmp_path / "task.yaml"
    path.write_text(
        "name: t\nphases: [{name: w, instructions: 'Use {{ a }} and {{ b }}'}]\ninputs:\n"
        "  - {id: a, question: Which a, header: A, ask_when: {b: x}}\n"
        "  - {id: b, question: Which b, header: B, ask_when: {a: y}}\n"
    )
    result = phasegate("plan", path, "--workdir", project)
    assert result.returncode == 2
    assert f"{path}: inputs.0.ask_when: input 'a' depends on itself" in result.stderr
