"""The action's own steps, apart from what phasegate judges: the Python check, the reused
virtual environment, inputs refused before anything runs, secrets masked line by line, and
the fence around phasegate's output."""

from __future__ import annotations

import shutil
import stat
import sys
from pathlib import Path

import pytest

from tests.helpers.action import EXAMPLE, REPO
from tests.helpers.composite import CompositeAction

OLD_PYTHON = """#!/bin/sh
# A python3 that is 3.10: it fails the version check and prints 3.10 when asked.
case "$2" in
  *"sys.exit(sys.version_info < (3, 11))"*) exit 1 ;;
  *"print(\\"%d.%d\\""*) echo 3.10 ;;
  *) exec "{real}" "$@" ;;
esac
"""


def test_a_python_older_than_3_11_fails_the_install_step_naming_python_version(
    workspace: Path, tmp_path: Path
) -> None:
    """No venv is built and nothing else runs; the error says which input fixes it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "python3"
    fake.write_text(OLD_PYTHON.format(real=sys.executable))
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    action = CompositeAction(
        REPO, workspace=workspace, runner_temp=tmp_path / "temp", python_bin=bin_dir
    )

    run = action.run({"task": "task.yaml"})

    assert run.failed
    install = run.step("install")
    assert install.exit_code == 1
    (error,) = install.commands
    assert error.name == "error"
    assert "3.10" in error.data and "python_version" in error.data
    assert not run.step("run").ran and not run.step("github").ran
    assert not (tmp_path / "temp" / "phasegate-venv").exists()


@pytest.mark.cli
def test_a_second_use_in_the_same_job_reuses_the_virtual_environment(
    action: CompositeAction,
) -> None:
    """The venv under RUNNER_TEMP is stamped with the action's source and reused."""
    first = action.run({"command": "neither"})
    second = action.run({"command": "neither"})

    assert second.step("install").outputs["reused"] == "true"
    assert second.step("install").outputs["phasegate"] == first.step("install").outputs["phasegate"]
    assert Path(second.step("install").outputs["phasegate"]).exists()


@pytest.mark.cli
@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"command": "neither"}, "command must be run or judge"),
        ({}, "command run needs a task or a pipeline input"),
        ({"task": "t.yaml", "pipeline": "p.yaml"}, "give task or pipeline, not both"),
        ({"pipeline": "p.yaml", "max_cost": "1"}, "do not apply to a pipeline"),
        ({"task": "t.yaml", "command": "judge"}, "needs an execution_file input"),
        ({"execution_file": "x.json"}, "command judge needs a task input"),
        ({"task": "t", "execution_file": "x", "model": "m"}, "do not apply to command judge"),
        ({"task": "t", "execution_file": "x", "command": "run"}, "execution_file is for command"),
    ],
)  # fmt: skip
def test_inputs_that_do_not_fit_are_refused_before_phasegate_runs(
    action: CompositeAction, inputs: dict[str, str], message: str
) -> None:
    """The run step says what to change, in an annotation of its own; its exit code 2 makes
    the verdict error, which fails the step under the default fail_on."""
    run = action.run(inputs)

    step = run.step("run")
    assert step.exit_code == 0 and step.outputs["exit_code"] == "2"
    assert [(c.name, c.properties.get("title")) for c in step.commands] == [("error", "phasegate")]
    assert message in step.commands[0].data
    assert "::stop-commands::" not in step.output  # phasegate never started
    assert run.outputs["verdict"] == "error" and run.outputs["exit_code"] == "2"
    assert run.failed


@pytest.mark.cli
def test_keys_are_masked_line_by_line_before_phasegate_starts_and_the_fence_closes(
    action: CompositeAction, workspace: Path
) -> None:
    """Every line of a key becomes its own add-mask (``%`` escaped so the runner masks the
    key as written), all before the stop-commands fence; the fence is closed at the end."""
    shutil.copytree(EXAMPLE, workspace / "fix")
    run = action.run(
        {
            "task": "fix/task.yaml",
            "workdir": "fix/project",
            "model_script": "fix/model.yaml",
            "anthropic_api_key": "sk-first\r\nsk-100%-second\n",
            "claude_code_oauth_token": "oauth-token",
        }
    )

    step = run.step("run")
    masks = [c.data for c in step.commands if c.name == "add-mask"]
    assert masks == ["sk-first", "sk-100%-second", "oauth-token"]
    assert step.output.index("::add-mask::oauth-token") < step.output.index("::stop-commands::")
    assert not step.stopped_at_end
    assert step.output.rstrip().splitlines()[-1].startswith("::")  # the resume token
    assert step.outputs["exit_code"] == "0"
