"""The service's runs are confined where the machine can (optional by default: the report
says so), and ``serve --no-sandbox`` turns that off for every run."""

from __future__ import annotations

from pathlib import Path

import pytest

from phasegate.agents.claude.sandbox import sandbox_problem
from tests.helpers.service import running_service

pytestmark = pytest.mark.cli


def _report(root: Path, *flags: str) -> dict[str, object]:
    with running_service(root, "--model-script", root / "scripts" / "task.yaml", *flags) as service:
        client = service.client()
        run = service.start_run(client, task="task.yaml", workdir="project", copy_workdir=True)
        finished = service.wait(client, run["id"])
        assert finished["verdict"] == "accepted", finished
        report: dict[str, object] = finished["report"]
        return report


def test_a_run_is_optionally_confined_by_default(root: Path) -> None:
    problem = sandbox_problem()
    assert _report(root)["sandbox"] == {
        "mode": "optional", "confined": problem is None, "network": [], "unavailable": problem,
    }  # fmt: skip


def test_no_sandbox_confines_no_run(root: Path) -> None:
    """The task says nothing and the switch says off: no sandbox was asked for."""
    assert "sandbox" not in _report(root, "--no-sandbox")
