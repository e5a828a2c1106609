"""A simulated GitHub runner that executes a composite action's steps for real.

It reads ``action.yml`` and runs each ``run:`` step as the Linux runner does: the script,
with its ``${{ ... }}`` expressions substituted, written to a file and run with ``bash
--noprofile --norc -eo pipefail FILE`` in the workspace; the step's ``env:`` applied; fresh
``GITHUB_OUTPUT``, ``GITHUB_ENV``, ``GITHUB_PATH``, ``GITHUB_STATE`` and
``GITHUB_STEP_SUMMARY`` files per step, read afterwards with the runner's own rules
(:mod:`tests.helpers.github_runner`); stdout and stderr read through
:class:`CommandProcessor`, so a test sees exactly the workflow commands the runner would act
on. ``uses:`` steps are skipped: the local Python stands in for actions/setup-python and
nothing is cached. A failing step skips later steps unless their ``if:`` says otherwise; the
action's outputs come from its ``outputs:`` expressions.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.helpers.expressions import condition_holds, substitute
from tests.helpers.github_runner import (
    CommandProcessor,
    FileCommandError,
    WorkflowCommand,
    file_command_pairs,
    output_lines,
    read_outputs,
)

FILE_COMMANDS = (
    "GITHUB_OUTPUT",
    "GITHUB_ENV",
    "GITHUB_PATH",
    "GITHUB_STATE",
    "GITHUB_STEP_SUMMARY",
)
"""The per-step files a runner gives each step, by environment variable."""


@dataclass
class StepRun:
    """What one step did, as the runner sees it."""

    id: str
    name: str
    ran: bool
    exit_code: int | None = None
    output: str = ""
    """stdout and stderr, interleaved as written."""
    commands: list[WorkflowCommand] = field(default_factory=list)
    """Workflow commands the runner would act on."""
    stopped_at_end: bool = False
    """Whether workflow commands were still stopped when the step ended."""
    outputs: dict[str, str] = field(default_factory=dict)
    env: list[tuple[str, str]] = field(default_factory=list)
    """Entries of the step's ``GITHUB_ENV`` (applied to later steps)."""
    path: list[str] = field(default_factory=list)
    """Lines of the step's ``GITHUB_PATH`` (prepended to later steps' PATH)."""
    state: list[tuple[str, str]] = field(default_factory=list)
    summary: str = ""
    file_command_error: str | None = None
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        """Whether the runner marks this step failed."""
        return self.ran and (self.exit_code != 0 or self.file_command_error is not None)


@dataclass
class ActionRun:
    """One run of the composite action."""

    steps: list[StepRun]
    outputs: dict[str, str]

    @property
    def failed(self) -> bool:
        """Whether the action step fails in the workflow."""
        return any(step.failed for step in self.steps)

    def step(self, step_id: str) -> StepRun:
        """The step with this id."""
        (found,) = [step for step in self.steps if step.id == step_id]
        return found

    @property
    def commands(self) -> list[WorkflowCommand]:
        """Every workflow command of every step, in order."""
        return [command for step in self.steps for command in step.commands]

    @property
    def output(self) -> str:
        """The whole log: every step's output."""
        return "".join(step.output for step in self.steps)


class CompositeAction:
    """The composite action at ``action_dir``, run in a simulated runner.

    ``python_bin``: a directory holding the ``python3`` that stands in for the runner's (it
    goes first on PATH). ``runner_temp`` may be shared between runs (the action keeps its
    virtual environment there). ``file_commands``: the directory of the per-step files, which
    are then named ``github_output_STEPID`` and so on (default: a fresh directory under
    ``runner_temp`` and names no one can guess, as on GitHub).
    """

    def __init__(
        self,
        action_dir: Path,
        *,
        workspace: Path,
        runner_temp: Path,
        python_bin: Path,
        sha: str = "0" * 40,
        env: Mapping[str, str] | None = None,
        file_commands: Path | None = None,
    ) -> None:
        self.action_dir = action_dir
        self.metadata: dict[str, Any] = yaml.safe_load((action_dir / "action.yml").read_text())
        self.workspace = workspace
        self.runner_temp = runner_temp
        self.python_bin = python_bin
        self.sha = sha
        self.extra_env = dict(env or {})
        self.file_commands = file_commands

    def run(
        self,
        inputs: Mapping[str, str],
        *,
        stand_in: Mapping[str, Mapping[str, str]] | None = None,
        timeout: float = 300,
    ) -> ActionRun:
        """Run every step with ``inputs`` (the ``with:`` of the workflow step).

        ``stand_in``: steps not run but taken as passed with these outputs, by step id (a
        test of one step gives it a stand-in for an earlier one).
        """
        stand_in = stand_in or {}
        declared = self.metadata["inputs"]
        unexpected = set(inputs) - set(declared)
        assert not unexpected, f"inputs the action does not declare: {sorted(unexpected)}"
        self.runner_temp.mkdir(parents=True, exist_ok=True)
        files_dir = self.file_commands or Path(
            tempfile.mkdtemp(prefix="_runner_file_commands", dir=self.runner_temp)
        )
        files_dir.mkdir(parents=True, exist_ok=True)
        context: dict[str, Any] = {
            "github": {
                "action_path": str(self.action_dir),
                "workspace": str(self.workspace),
                "sha": self.sha,
            },
            "runner": {"temp": str(self.runner_temp), "os": "Linux"},
            "steps": {},
        }
        context["inputs"] = {
            name: inputs.get(name, substitute(str(spec.get("default", "")), context))
            for name, spec in declared.items()
        }
        added_env: dict[str, str] = {}
        added_path: list[str] = []
        steps: list[StepRun] = []
        for index, spec in enumerate(self.metadata["runs"]["steps"]):
            step_id = spec.get("id", f"__{index}")
            failed = any(step.failed for step in steps)
            condition = str(spec.get("if", "success()"))
            if "uses" in spec or not condition_holds(condition, context, failed=failed):
                steps.append(StepRun(step_id, spec.get("name", ""), ran=False))
                continue
            if step_id in stand_in:
                outputs = dict(stand_in[step_id])
                steps.append(StepRun(step_id, "stand-in", ran=False, outputs=outputs))
                context["steps"][step_id] = {"outputs": outputs}
                continue
            step = self._run_step(
                index, spec, context, files_dir, added_env, added_path, timeout=timeout
            )
            steps.append(step)
            context["steps"][step_id] = {"outputs": step.outputs}
            added_env.update(step.env)
            added_path[:0] = step.path
        outputs = {
            name: substitute(str(spec["value"]), context)
            for name, spec in self.metadata.get("outputs", {}).items()
        }
        return ActionRun(steps, outputs)

    def _run_step(
        self,
        index: int,
        spec: dict[str, Any],
        context: dict[str, Any],
        files_dir: Path,
        added_env: dict[str, str],
        added_path: list[str],
        *,
        timeout: float,
    ) -> StepRun:
        assert spec.get("shell") == "bash", f"step {index}: only shell: bash is simulated"
        step_id = spec.get("id", f"__{index}")
        tail = step_id if self.file_commands else f"{step_id}_{uuid.uuid4()}"
        files = {name: files_dir / f"{name.lower()}_{tail}" for name in FILE_COMMANDS}
        for path in files.values():
            path.write_bytes(b"")  # a new, empty file for every step
        script = Path(tempfile.mkdtemp(dir=self.runner_temp)) / f"step_{step_id}.sh"
        script.write_text(substitute(spec["run"], context))
        env = self._base_env(added_path)
        env.update(added_env)
        env.update({name: str(path) for name, path in files.items()})
        for name, value in (spec.get("env") or {}).items():
            env[name] = substitute(str(value), context)
        started = time.monotonic()
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=self.workspace,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=timeout,
            check=False,
        )
        step = StepRun(step_id, spec.get("name", ""), ran=True, exit_code=done.returncode)
        step.seconds = time.monotonic() - started
        step.output = done.stdout.decode("utf-8", errors="replace")
        processor = CommandProcessor()
        processor.feed(output_lines(step.output))
        step.commands, step.stopped_at_end = processor.acted, processor.stopped
        try:
            step.outputs = read_outputs(files["GITHUB_OUTPUT"])
            step.env = file_command_pairs(_text(files["GITHUB_ENV"]))
            step.state = file_command_pairs(_text(files["GITHUB_STATE"]))
        except FileCommandError as error:
            step.file_command_error = str(error)
        step.path = [line for line in _text(files["GITHUB_PATH"]).split("\n") if line]
        step.summary = _text(files["GITHUB_STEP_SUMMARY"])
        return step

    def _base_env(self, added_path: list[str]) -> dict[str, str]:
        """The environment every step starts from: the test's, minus anything GitHub or
        Anthropic, plus what the runner sets."""
        env = {
            name: value
            for name, value in os.environ.items()
            if not name.startswith(("GITHUB_", "RUNNER_", "ANTHROPIC_", "CLAUDE_", "INPUT_"))
        }
        path = [*added_path, str(self.python_bin), env.get("PATH", "")]
        env.update(
            {
                "PATH": os.pathsep.join(path),
                "GITHUB_ACTIONS": "true",
                "CI": "true",
                "GITHUB_WORKSPACE": str(self.workspace),
                "GITHUB_ACTION_PATH": str(self.action_dir),
                "GITHUB_SHA": self.sha,
                "RUNNER_TEMP": str(self.runner_temp),
                "RUNNER_OS": "Linux",
            }
        )
        env.update(self.extra_env)
        return env


def _text(path: Path) -> str:
    """A file's text with its line ends as written (the runner keeps a lone "\r")."""
    if not path.exists():
        return ""
    with path.open(encoding="utf-8", newline="") as file:
        return file.read()
