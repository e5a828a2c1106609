"""Fixtures of the action tests: a simulated runner around the repository's action.yml.

The runner's temporary directory is shared by the whole session, so the action's install
step builds its virtual environment once (about 20 s) and later runs reuse it, as a second
use of the action in one job does.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.helpers.action import REPO, ActionFactory
from tests.helpers.composite import CompositeAction


@pytest.fixture(scope="session")
def runner_temp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``RUNNER_TEMP`` for every run of the session (it holds the action's venv)."""
    return tmp_path_factory.mktemp("runner_temp")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty ``GITHUB_WORKSPACE``."""
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture
def make_action(workspace: Path, runner_temp: Path) -> ActionFactory:
    """Builds the action run in ``workspace`` with this test's Python standing in for the
    runner's; ``sha`` is ``github.sha``, ``file_commands`` as :class:`CompositeAction` takes it."""

    def build(*, sha: str = "0" * 40, file_commands: Path | None = None) -> CompositeAction:
        return CompositeAction(
            REPO,
            workspace=workspace,
            runner_temp=runner_temp,
            python_bin=Path(sys.executable).parent,
            sha=sha,
            file_commands=file_commands,
        )

    return build


@pytest.fixture
def action(make_action: ActionFactory) -> CompositeAction:
    """The action run in ``workspace``, in a job started from commit 000…0."""
    return make_action()
