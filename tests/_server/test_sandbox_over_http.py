"""The service's runs are confined where the machine can (optional by default: the report
says so), ``serve --no-sandbox`` turns that off for every run, and each attempt to leave is
streamed as an event."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from phasegate.agents.claude.sandbox import sandbox_problem
from tests.helpers.scenarios import EDIT, GOOD_JSON, MARKER
from tests.helpers.service import events, running_service

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


def test_each_blocked_attempt_is_streamed_as_it_is_recorded(root: Path) -> None:
    """The event stream carries ``sandbox.blocked`` like every other event: a Write outside the
    work directory, refused before it ran (the file tools are confined whether or not the
    machine can run the sandbox), is one event, the report's one attempt."""
    outside = root.parent / "outside.txt"
    script = root / "scripts" / "write-outside.yaml"
    write = {"Write": {"file_path": str(outside), "content": "escaped"}}
    script.write_text(yaml.safe_dump({"replies": [
        {"tools": [write]},
        {"when": "tool_error", "text": "Fixing it.", "tools": [EDIT]},
        {"when": "tool_result", "text": f"{MARKER}\n\n{GOOD_JSON}"},
    ]}))  # fmt: skip
    with running_service(root, "--model-script", script) as service:
        client = service.client()
        run = service.start_run(client, task="task.yaml", workdir="project", copy_workdir=True)
        streamed = events(client, run["id"])
        finished = client.get(f"/v1/runs/{run['id']}").json()

    assert finished["verdict"] == "accepted" and not outside.exists()
    (blocked,) = finished["report"]["blocked"]
    (event,) = [e.json for e in streamed if e.event == "sandbox.blocked"]
    assert (event["kind"], event["target"], event["phase"]) == ("file_tool", str(outside), 1)
    assert event["tool_use_id"] == blocked["tool_use_id"] and event["run_id"] == run["id"]
    (completed,) = [e.json for e in streamed if e.event == "run.completed"]
    assert completed["blocked"] == 1
