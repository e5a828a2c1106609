"""``--sandbox`` / ``--no-sandbox`` and PHASEGATE_SANDBOX_DEFAULT on the command line: the
switch wins over the file, the default applies when neither says, and an agent that cannot
confine its commands stops the run with exit 2 before it starts (the in-process scripted
agent runs no sandbox)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers.cli import phasegate
from tests.helpers.scenarios import EXAMPLE


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    shutil.copytree(EXAMPLE / "project", folder)
    return folder


def _run(
    work: Path, *flags: str, task: Path = EXAMPLE / "task.yaml", **env: str
) -> subprocess.CompletedProcess[str]:
    return phasegate(
        "run", task, "-w", work, "--agent", "scripted", "--script", EXAMPLE / "model.yaml",
        "--json", "-q", *flags, env={**os.environ, **env},
    )  # fmt: skip


@pytest.mark.parametrize("asked", [["--sandbox"], []])
def test_sandbox_on_stops_a_run_whose_agent_cannot_confine_with_exit_2(
    work: Path, tmp_path: Path, asked: list[str]
) -> None:
    task = tmp_path / "task.yaml"
    task.write_text((EXAMPLE / "task.yaml").read_text() + "\nsandbox: on\n")
    done = _run(work, *asked, task=task if not asked else EXAMPLE / "task.yaml")
    assert done.returncode == 2, done.stderr
    assert "the scripted agent has no sandbox" in done.stderr
    assert "(command line: --sandbox / --no-sandbox)" in done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr


def test_no_sandbox_wins_over_the_file(work: Path, tmp_path: Path) -> None:
    task = tmp_path / "task.yaml"
    task.write_text((EXAMPLE / "task.yaml").read_text() + "\nsandbox: on\n")
    done = _run(work, "--no-sandbox", task=task)
    assert done.returncode == 0, done.stderr  # judged as usual: accepted after feedback
    assert json.loads(done.stdout)["sandbox"] == {
        "mode": "off", "confined": False, "network": [], "unavailable": None
    }  # fmt: skip


def test_the_default_applies_when_neither_says(work: Path) -> None:
    done = _run(work, PHASEGATE_SANDBOX_DEFAULT="optional")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["sandbox"] == {
        "mode": "optional", "confined": False, "network": [],
        "unavailable": "the scripted agent has no sandbox to run its commands in",
    }  # fmt: skip


def test_without_a_switch_a_file_or_a_default_no_sandbox_is_asked_for(work: Path) -> None:
    done = _run(work)
    assert done.returncode == 0, done.stderr
    assert "sandbox" not in json.loads(done.stdout)


def test_a_default_that_is_not_a_mode_is_a_usage_error(work: Path) -> None:
    done = _run(work, PHASEGATE_SANDBOX_DEFAULT="sometimes")
    assert done.returncode == 2
    assert "PHASEGATE_SANDBOX_DEFAULT='sometimes': give off, on or optional" in done.stderr
