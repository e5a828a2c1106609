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
from tests.helpers.composite import FILE_COMMANDS, ActionRun, CompositeAction

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


FAKE_PHASEGATE = """#!/bin/bash
# Stands in for phasegate: keeps its arguments and environment, then acts like the command.
printf '%s\\0' "$@" > "$FAKE_RECORD/args-$1"
env -0 > "$FAKE_RECORD/env-$1"
if [ "$1" = github ]; then exit "$FAKE_GITHUB_EXIT"; fi
[ -n "$FAKE_REPORT" ] && echo "$FAKE_REPORT"
echo "::error::FORGED progress line" >&2
exit "$FAKE_EXIT"
"""


class FakePhasegate:
    """A fake ``phasegate`` in place of the install step's, and what it was given."""

    def __init__(self, tmp_path: Path, *, report: str, exit_code: int, github_exit: int) -> None:
        self.record = tmp_path / "record"
        self.record.mkdir()
        self.path = tmp_path / "phasegate"
        self.path.write_text(FAKE_PHASEGATE)
        self.path.chmod(0o755)
        self.env = {
            "FAKE_RECORD": str(self.record),
            "FAKE_REPORT": report,
            "FAKE_EXIT": str(exit_code),
            "FAKE_GITHUB_EXIT": str(github_exit),
        }

    def args(self, command: str) -> list[str]:
        """The arguments of the ``command`` call."""
        return (self.record / f"args-{command}").read_text().split("\0")[:-1]

    def environment(self, command: str) -> dict[str, str]:
        """The environment of the ``command`` call."""
        pairs = (self.record / f"env-{command}").read_text().split("\0")[:-1]
        return dict(pair.split("=", 1) for pair in pairs)


def faked_run(
    workspace: Path,
    tmp_path: Path,
    inputs: dict[str, str],
    *,
    report: str = '{"r": 1}',
    exit_code: int = 1,
    github_exit: int = 0,
    sha: str = "0" * 40,
) -> tuple[FakePhasegate, ActionRun]:
    """The action with the install step's phasegate replaced by a fake (no venv built)."""
    fake = FakePhasegate(tmp_path, report=report, exit_code=exit_code, github_exit=github_exit)
    action = CompositeAction(
        REPO, workspace=workspace, runner_temp=tmp_path / "temp",
        python_bin=Path(sys.executable).parent, sha=sha, env=fake.env,
    )  # fmt: skip
    installed = {"phasegate": str(fake.path), "python": sys.executable}
    return fake, action.run(inputs, stand_in={"install": installed})


def test_run_passes_each_set_input_as_an_option_and_the_task_after_a_double_dash(
    workspace: Path, tmp_path: Path
) -> None:
    """Options in --name=value form, files made absolute against the workspace, the task
    after "--": no value can be read as another option."""
    fake, run = faked_run(
        workspace,
        tmp_path,
        {
            "task": "tasks/fix.yaml", "mode": "single-query", "max_attempts": "3",
            "max_cost": "2.5",
            "model": "--model-script=/evil", "model_script": "./s.yaml", "log_file": "logs/e.jsonl",
        },
    )  # fmt: skip

    files = run.step("run").outputs
    assert fake.args("run") == [
        "run", "--mode=single-query", "--max-attempts=3", "--max-cost=2.5",
        "--model=--model-script=/evil", "--timeout=1800", f"--model-script={workspace}/s.yaml",
        f"--workdir={workspace}", "--json", f"--log-file={workspace}/logs/e.jsonl",
        "--", f"{workspace}/tasks/fix.yaml",
    ]  # fmt: skip
    assert files["log"] == f"{workspace}/logs/e.jsonl"
    assert fake.args("github") == [
        "github", "--exit-code=1", "--fail-on=rejected", "--summary", f"--log={files['log']}",
        f"--html-report={files['html']}", f"--workdir={workspace}", "--", files["report"],
    ]  # fmt: skip


def test_judge_gets_the_execution_file_and_before_defaults_to_the_jobs_commit(
    workspace: Path, tmp_path: Path
) -> None:
    """execution_file makes judge the default; before is github.sha unless given; summary
    false reaches the github step."""
    inputs = {"task": "t.yaml", "execution_file": "/tmp/x.json", "summary": "false"}
    fake, run = faked_run(workspace, tmp_path, inputs, sha="abc123")

    files = run.step("run").outputs
    assert fake.args("judge") == [
        "judge", "--transcript=/tmp/x.json", "--before=abc123", f"--workdir={workspace}",
        "--json", f"--log-file={files['log']}", "--", f"{workspace}/t.yaml",
    ]  # fmt: skip
    assert "--no-summary" in fake.args("github")


def test_phasegate_runs_without_the_steps_files_or_the_stop_token_and_its_output_is_fenced(
    workspace: Path, tmp_path: Path
) -> None:
    """Its environment holds none of GITHUB_OUTPUT, GITHUB_ENV, GITHUB_PATH, GITHUB_STATE,
    GITHUB_STEP_SUMMARY, nor the token (which no argument holds either); the key it needs is
    there under its own name only; what it prints on stderr is inside the fence; its stdout
    is the report; the step passes with phasegate's exit code as an output."""
    fake, run = faked_run(
        workspace, tmp_path, {"task": "t.yaml", "anthropic_api_key": "sk-key"}, exit_code=1
    )

    step = run.step("run")
    token = step.output.split("::stop-commands::", 1)[1].split("\n", 1)[0]
    assert len(token) >= 32
    seen = fake.environment("run")
    assert not set(seen) & set(FILE_COMMANDS)
    assert not [name for name, value in seen.items() if token in value or token in name]
    assert not [arg for arg in fake.args("run") if token in arg]
    assert seen["ANTHROPIC_API_KEY"] == "sk-key"
    assert not [
        name for name, value in seen.items() if value == "sk-key" and name != "ANTHROPIC_API_KEY"
    ]
    assert step.output.index("FORGED progress line") > step.output.index(token)
    assert [c.name for c in step.commands] == ["add-mask"]
    assert not step.stopped_at_end
    assert step.exit_code == 0 and step.outputs["exit_code"] == "1"
    assert Path(step.outputs["report"]).read_text() == '{"r": 1}\n'
    assert not Path(step.outputs["report"] + ".part").exists()


def test_a_phasegate_that_writes_no_report_leaves_none_and_the_github_step_decides(
    workspace: Path, tmp_path: Path
) -> None:
    """A crash before the report: no report file (not an empty one), exit code 3 handed on,
    and the github step's exit status is the action's."""
    fake, run = faked_run(
        workspace, tmp_path, {"task": "t.yaml"}, report="", exit_code=3, github_exit=3
    )

    files = run.step("run").outputs
    assert files["exit_code"] == "3"
    assert not Path(files["report"]).exists() and not Path(files["report"] + ".part").exists()
    assert "--exit-code=3" in fake.args("github")
    assert run.failed and run.step("github").exit_code == 3


def test_a_pipeline_gets_the_options_it_takes(workspace: Path, tmp_path: Path) -> None:
    """pipeline run takes the model, the timeout and the model script."""
    inputs = {"pipeline": "p.yaml", "model": "m", "timeout": "60", "workdir": "w"}
    fake, run = faked_run(workspace, tmp_path, inputs)

    assert fake.args("pipeline") == [
        "pipeline", "run", "--model=m", "--timeout=60", f"--workdir={workspace}/w", "--json",
        f"--log-file={run.step('run').outputs['log']}", "--", f"{workspace}/p.yaml",
    ]  # fmt: skip


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
    workspace: Path, tmp_path: Path, inputs: dict[str, str], message: str
) -> None:
    """The run step says what to change in an annotation of its own, never starts phasegate,
    and hands exit code 2 to the github step (a bad-input error there)."""
    fake, run = faked_run(workspace, tmp_path, inputs)

    step = run.step("run")
    assert step.exit_code == 0 and step.outputs["exit_code"] == "2"
    assert [(c.name, c.properties.get("title")) for c in step.commands] == [("error", "phasegate")]
    assert message in step.commands[0].data
    assert "::stop-commands::" not in step.output
    assert sorted(path.name for path in fake.record.iterdir()) == ["args-github", "env-github"]
    assert "--exit-code=2" in fake.args("github")


@pytest.mark.cli
def test_a_refused_input_makes_the_verdict_error_and_fails_the_step(
    action: CompositeAction,
) -> None:
    """With the real phasegate github: verdict error, exit code 2, the step fails under the
    default fail_on."""
    run = action.run({"task": "t.yaml", "pipeline": "p.yaml"})

    assert run.outputs["verdict"] == "error" and run.outputs["exit_code"] == "2"
    assert run.outputs["success"] == "false"
    assert run.failed and run.step("github").exit_code == 2
