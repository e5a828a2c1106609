"""A command check's ``exit_code`` is one a process can exit with, 0 to 255: a code no
program can return (300) would make a check that can never pass, and a negative one would
take a command killed by a signal (Python's ``-9``) as the exit it asked for. Both are
refused when the task loads, naming the field; ``phasegate check`` exits 2 on them."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers.cli import phasegate

from phasegate.errors import TaskFileError
from phasegate.phases.loading import load_task

TASK = """name: t
description: d
phases:
  - name: a
    instructions: Do it.
    checks:
      - command: {{argv: [make, test], exit_code: {code}}}
"""


@pytest.mark.parametrize("code", [-9, 256, 300])
def test_an_exit_code_no_process_can_exit_with_is_refused_naming_the_field(
    tmp_path: Path, code: int
) -> None:
    task = tmp_path / "task.yaml"
    task.write_text(TASK.format(code=code))

    with pytest.raises(TaskFileError, match=r"phases\.0\.checks\.0\.command\.exit_code"):
        load_task(task)
    done = phasegate("check", task)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "phases.0.checks.0.command.exit_code" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("code", [0, 1, 255])
def test_an_exit_code_from_0_to_255_loads(tmp_path: Path, code: int) -> None:
    task = tmp_path / "task.yaml"
    task.write_text(TASK.format(code=code))

    (phase,) = load_task(task).phases
    assert phase.checks[0].exit_code == code  # type: ignore[union-attr]
