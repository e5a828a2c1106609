"""`phasegate execute` refusing what it cannot keep its promises with: a `.phasegate` that is
a file or a symbolic link out of the work directory. A result line and exit 2, never a
traceback, and nothing written outside."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli import phasegate
from tests.helpers.inputs import planned_ci_task

ANSWERS = json.dumps({"target": "Fly.io", "team": "core"})


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """The task file, the project, its plan, and a scripted model that marks the phase."""
    return planned_ci_task(tmp_path)


def execute_with_key(files: tuple[Path, Path, Path, Path]) -> tuple[int, dict[str, object], str]:
    task, project, plan, script = files
    done = phasegate("execute", task, "--workdir", project, "--plan", plan, "--responses",
                     ANSWERS, "--agent", "scripted", "--script", script,
                     "--idempotency-key", "k")  # fmt: skip
    (line,) = [json.loads(text) for text in done.stdout.splitlines()]
    return done.returncode, line, done.stderr


def test_a_phasegate_file_where_its_folder_goes_is_refused_with_a_result_line(
    files: tuple[Path, Path, Path, Path],
) -> None:
    (files[1] / ".phasegate").write_text("not a folder\n")
    code, line, stderr = execute_with_key(files)
    assert code == 2 and "Traceback" not in stderr
    assert line["success"] is False and line["error"]["code"] == "bad_input"  # type: ignore[index]


def test_a_phasegate_link_out_of_the_work_directory_is_refused_and_nothing_written_there(
    files: tuple[Path, Path, Path, Path], tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (files[1] / ".phasegate").symlink_to(outside)
    code, line, _ = execute_with_key(files)
    assert code == 2 and "symbolic link" in str(line["message"])
    assert list(outside.iterdir()) == []


def test_without_a_key_nothing_is_kept_and_an_odd_phasegate_entry_does_not_matter(
    files: tuple[Path, Path, Path, Path],
) -> None:
    task, project, plan, script = files
    (project / ".phasegate").write_text("not a folder\n")
    done = phasegate("execute", task, "--workdir", project, "--plan", plan, "--responses",
                     ANSWERS, "--agent", "scripted", "--script", script)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout.splitlines()[-1])["success"] is True


@pytest.mark.parametrize("answers", ["{}", ANSWERS])
def test_no_lock_file_is_left_in_executions_whether_execute_is_refused_or_runs(
    files: tuple[Path, Path, Path, Path], answers: str
) -> None:
    """Answers missing are refused (exit 2) while the key is held; the lock goes either way."""
    task, project, plan, script = files
    done = phasegate("execute", task, "--workdir", project, "--plan", plan, "--responses",
                     answers, "--agent", "scripted", "--script", script,
                     "--idempotency-key", "k")  # fmt: skip
    assert done.returncode == (2 if answers == "{}" else 0), done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert list((project / ".phasegate" / "executions").glob("*.lock")) == []
