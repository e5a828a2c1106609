"""The action's ``sandbox`` input: the run's default sandbox mode (optional unless the input
says otherwise), handed to the command as PHASEGATE_SANDBOX_DEFAULT; a word that is not a
mode stops the run before the command starts."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.helpers.action import REPO
from tests.helpers.composite import ActionRun, CompositeAction

FAKE = """#!/bin/bash
# Stands in for phasegate: keeps the sandbox default each command was started with.
printf '%s' "${PHASEGATE_SANDBOX_DEFAULT-unset}" > "$FAKE_RECORD/sandbox-$1"
if [ "$1" = github ]; then exit 0; fi
echo '{"r": 1}'
exit 0
"""


def run_action(workspace: Path, tmp_path: Path, inputs: dict[str, str]) -> tuple[Path, ActionRun]:
    """The action with a fake phasegate; the fake's folder."""
    record = tmp_path / "fake"
    record.mkdir()
    fake = tmp_path / "phasegate"
    fake.write_text(FAKE)
    fake.chmod(0o755)
    action = CompositeAction(
        REPO, workspace=workspace, runner_temp=tmp_path / "temp",
        python_bin=Path(sys.executable).parent, env={"FAKE_RECORD": str(record)},
    )  # fmt: skip
    installed = {"phasegate": str(fake), "python": sys.executable}
    return record, action.run(inputs, stand_in={"install": installed})


@pytest.mark.parametrize(("given", "mode"), [(None, "optional"), ("on", "on"), ("off", "off")])
def test_the_input_is_the_runs_default_sandbox_mode(
    workspace: Path, tmp_path: Path, given: str | None, mode: str
) -> None:
    inputs = {"task": "t.yaml", **({"sandbox": given} if given is not None else {})}
    record, _ = run_action(workspace, tmp_path, inputs)
    assert (record / "sandbox-run").read_text() == mode


def test_a_word_that_is_not_a_mode_stops_the_run(workspace: Path, tmp_path: Path) -> None:
    record, run = run_action(workspace, tmp_path, {"task": "t.yaml", "sandbox": "maybe"})
    assert not (record / "sandbox-run").exists()
    errors = [c.data for c in run.commands if c.name == "error"]
    assert any("sandbox must be on, off or optional" in e for e in errors), run.commands
