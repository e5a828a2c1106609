"""The action in run mode, every step executed for real in a simulated runner: phasegate
installed from this checkout, the real Claude Code CLI against the scripted model server
(``model_script``), and ``phasegate github`` writing the outputs, the summary and the
annotations, read back as the runner reads them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.helpers.action import (
    EXAMPLE,
    FIXTURES,
    assert_outputs,
    report_of,
    usage_outputs,
)
from tests.helpers.composite import ActionRun, CompositeAction

pytestmark = [pytest.mark.cli]

TWO_NOTES = {
    "name": "two-notes",
    "stages": [
        {"name": name, "prompt": f"Write {name}.md.", "exit_when": [{"file_exists": f"{name}.md"}]}
        for name in ("plan", "build")
    ],
}


def _write(name: str) -> dict[str, object]:
    return {"Write": {"file_path": f"{name}.md", "content": f"{name}\n"}}


TWO_NOTES_MODEL = {
    "replies": [
        {"contains": "Stage 1 of 2: plan", "tools": [_write("plan")]},
        {"when": "tool_result", "text": "Plan written."},
        {"contains": "Stage 2 of 2: build", "tools": [_write("build")]},
        {"when": "tool_result", "text": "Build written."},
    ]
}


@pytest.fixture
def fix_example(workspace: Path) -> Path:
    """The fix-vulnerability example in the workspace: ``fix/task.yaml``, ``fix/model.yaml``
    and the project to fix in ``fix/project``."""
    shutil.copytree(EXAMPLE, workspace / "fix")
    shutil.copy(FIXTURES / "lazy.yaml", workspace / "fix" / "lazy.yaml")
    return workspace / "fix"


def run_files(run: ActionRun) -> dict[str, str]:
    """The files the run step chose: report, log, HTML report, work directory."""
    return run.step("run").outputs


def test_an_accepted_run_sets_every_output_and_passes(
    action: CompositeAction, fix_example: Path
) -> None:
    """The lazy model of the example is caught, fixes app.py after the feedback and is
    accepted: the step passes, every output says so, and the summary shows the verdict."""
    run = action.run(
        {"task": "fix/task.yaml", "workdir": "fix/project", "model_script": "fix/model.yaml"}
    )

    assert not run.failed, run.output
    files = run_files(run)
    assert files["exit_code"] == "0"
    report = report_of(run.outputs)
    assert report["verdict"] == "accepted" and report["session_id"]
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
            "session_id": report["session_id"],
            "final_message": report["final_message"],
            "log_file": files["log"],
            "html_report": files["html"],
        },
    )
    assert "PHASE 1 COMPLETE: Files have been edited" in run.outputs["final_message"]
    assert '"event": "run.started"' in Path(files["log"]).read_text()
    assert Path(files["html"]).read_text().lstrip().lower().startswith("<!doctype html")
    assert "accepted" in run.step("github").summary
    assert run.commands == []
    assert "eval(" not in (fix_example / "project" / "app.py").read_text()


def test_a_recorded_run_writes_its_page_and_the_summary_says_where_it_is(
    action: CompositeAction, fix_example: Path, workspace: Path
) -> None:
    """record: the real run records into the folder, the page step writes its page, the
    upload step would take the folder, and the job summary names the page (not uploaded
    here: the simulated runner skips uses: steps, so there is no artifact URL)."""
    run = action.run(
        {"task": "fix/task.yaml", "workdir": "fix/project", "model_script": "fix/model.yaml",
         "record": "recording"}
    )  # fmt: skip

    assert not run.failed, run.output
    folder = workspace / "recording"
    assert (folder / "recording.json").is_file() and (folder / "index.html").is_file()
    assert run.step("page").outputs["recorded"] == "true"
    assert not run.step("upload").ran  # a uses: step: the simulation skips it
    summary = run.step("github").summary
    assert f"**Recorded run:** the run's page is ` {folder}/index.html ` on the runner" in summary
    assert run.commands == []


@pytest.mark.parametrize(
    ("fail_on", "fails"), [("rejected", True), ("error", False), ("never", False)]
)
def test_a_rejected_run_fails_the_step_only_when_fail_on_says_so(
    action: CompositeAction, fix_example: Path, fail_on: str, fails: bool
) -> None:
    """A model that never edits is rejected: fail_on rejected (the default) fails the step
    with the run's exit code, error and never let it pass; the outputs are the same."""
    run = action.run(
        {
            "task": "fix/task.yaml",
            "workdir": "fix/project",
            "model_script": "fix/lazy.yaml",
            "max_attempts": "2",
            "fail_on": fail_on,
        }
    )

    assert run.failed is fails, run.output
    assert run.step("github").exit_code == (1 if fails else 0)
    files = run_files(run)
    report = report_of(run.outputs)
    assert report["verdict"] == "rejected" and report["attempts"] == 2
    codes = run.outputs["issue_codes"].split(",")
    assert {"tool_not_used", "no_changes", "claimed_not_changed"} <= set(codes)
    assert len(codes) == len(set(codes))
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
            "session_id": report["session_id"],
            "final_message": report["final_message"] or "",
            "log_file": files["log"],
            "html_report": files["html"],
        },
    )
    errors = [c for c in run.step("github").commands if c.name == "error"]
    assert errors, run.step("github").output
    assert {c.properties.get("file") for c in errors} >= {"fix/project/app.py"}
    assert "rejected" in run.step("github").summary


def test_a_pipeline_counts_stages_and_sets_every_output(
    action: CompositeAction, workspace: Path
) -> None:
    """pipeline: the stages are run in one session and counted as the phases are."""
    (workspace / "pipeline.yaml").write_text(yaml.safe_dump(TWO_NOTES))
    (workspace / "model.yaml").write_text(yaml.safe_dump(TWO_NOTES_MODEL))
    (workspace / "notes").mkdir()

    run = action.run(
        {"pipeline": "pipeline.yaml", "workdir": "notes", "model_script": "model.yaml"}
    )

    assert not run.failed, run.output
    files = run_files(run)
    report = report_of(run.outputs)
    assert report["verdict"] == "accepted" and "stages" in report
    assert_outputs(
        run.outputs,
        {
            "verdict": "accepted",
            "success": "true",
            "exit_code": "0",
            "report_file": files["report"],
            "summary_json": "",
            "phases_accepted": "2",
            "phases_rejected": "0",
            "issue_codes": "",
            **usage_outputs(report),
            "session_id": report["session_id"],
            "final_message": report["final_message"] or "",
            "log_file": files["log"],
            "html_report": files["html"],
        },
    )
    assert (workspace / "notes" / "build.md").read_text() == "build\n"
    assert run.commands == []


def test_a_task_with_checks_shows_each_checks_run_in_the_job_summary(
    action: CompositeAction, workspace: Path
) -> None:
    """examples/prove-the-fix in the action: the wrong fix is caught by the phase's check,
    the right one accepted, and the summary lists the check that decided, its output as
    inert code; no line of the run becomes a workflow command."""
    example = Path(__file__).resolve().parents[2] / "examples" / "prove-the-fix"
    shutil.copytree(example, workspace / "prove")
    run = action.run(
        {"task": "prove/task.yaml", "workdir": "prove/project", "model_script": "prove/model.yaml"}
    )

    assert not run.failed, run.output
    report = report_of(run.outputs)
    assert report["verdict"] == "accepted"
    assert report["phases"][0]["checks"][0]["passed"] is True
    summary = run.step("github").summary
    assert "python3 -m unittest discover -s tests" in summary
    assert "Ran 2 tests" in summary
    assert run.commands == []
