"""The action in judge mode: claude-code-action's execution file (a JSON array recorded from
the real CLI, tests/fixtures/action) judged against the task with the disk changes git shows
since ``before``, every step executed for real in a simulated runner."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers.action import (
    EXAMPLE,
    FIXTURES,
    ActionFactory,
    apply_fix,
    assert_outputs,
    project_checkout,
    report_of,
    usage_outputs,
)

pytestmark = [
    pytest.mark.cli,
    pytest.mark.skipif(shutil.which("git") is None, reason="judge needs git"),
]


@pytest.fixture
def checkout(workspace: Path) -> str:
    """The example project as the job's checkout (``workspace/project``) and the task beside
    it; the commit the runs started from."""
    shutil.copy(EXAMPLE / "task.yaml", workspace / "task.yaml")
    return project_checkout(workspace / "project")


def test_the_good_run_is_accepted_against_the_commit_the_job_started_from(
    make_action: ActionFactory, workspace: Path, checkout: str
) -> None:
    """The recorded run edited app.py and reported it; the checkout holds the edit. With
    ``before`` left to its default (``github.sha``) the work is accepted."""
    apply_fix(workspace / "project")
    run = make_action(sha=checkout).run(
        {
            "task": "task.yaml",
            "workdir": "project",
            "execution_file": str(FIXTURES / "good_execution_file.json"),
        }
    )

    assert not run.failed, run.output
    files = run.step("run").outputs
    report = report_of(run.outputs)
    assert report["verdict"] == "accepted"
    assert report["reconciliation"]["disk_changed"] == ["app.py"]
    recorded = json.loads((FIXTURES / "good_execution_file.json").read_text())
    assert_outputs(
        run.outputs,
        {
            "verdict": "accepted",
            "success": "true",
            "exit_code": "0",
            "report_file": files["report"],
            "summary_json": json.dumps(report["summary"], separators=(",", ":")),
            "phases_accepted": "2",
            "phases_rejected": "0",
            "issue_codes": "",
            **usage_outputs(report),
            "session_id": recorded[0]["session_id"],
            "final_message": recorded[-1]["result"],
            "log_file": files["log"],
            "html_report": files["html"],
        },
    )
    assert run.commands == []


def test_the_lazy_run_is_rejected_naming_the_file_it_claimed(
    make_action: ActionFactory, workspace: Path, checkout: str
) -> None:
    """The recorded run claimed app.py without editing it: rejected with an error annotation
    on project/app.py; ``before`` given explicitly; fail_on never keeps the step green."""
    run = make_action().run(
        {
            "command": "judge",
            "task": "task.yaml",
            "workdir": "project",
            "execution_file": str(FIXTURES / "lazy_execution_file.json"),
            "before": checkout,
            "fail_on": "never",
        }
    )

    assert not run.failed, run.output
    files = run.step("run").outputs
    report = report_of(run.outputs)
    recorded = json.loads((FIXTURES / "lazy_execution_file.json").read_text())
    codes = run.outputs["issue_codes"].split(",")
    assert {"tool_not_used", "no_changes", "claimed_not_changed"} <= set(codes)
    assert_outputs(
        run.outputs,
        {
            "verdict": "rejected",
            "success": "false",
            "exit_code": "1",
            "report_file": files["report"],
            "summary_json": "",
            "phases_accepted": str(sum(p["status"] == "accepted" for p in report["phases"])),
            "phases_rejected": str(sum(p["status"] == "rejected" for p in report["phases"])),
            "issue_codes": run.outputs["issue_codes"],
            **usage_outputs(report),
            "session_id": recorded[0]["session_id"],
            "final_message": recorded[-1]["result"],
            "log_file": files["log"],
            "html_report": files["html"],
        },
    )
    errors = [c for c in run.step("github").commands if c.name == "error"]
    assert "project/app.py" in {c.properties.get("file") for c in errors}
