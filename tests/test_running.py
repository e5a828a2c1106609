"""One way to run a definition (phasegate.running): the kind picks the runner, the options
mean the same for every kind, and every entry point (the command line, execute, the service,
a batch unit) gives the same report for the same definition."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from phasegate import LoopReport, PipelineReport, RunReport, Task, make_loop
from phasegate.agents.retry import RetryPolicy
from phasegate.phases.pipeline import Pipeline
from phasegate.running import RunOptions, run_definition
from phasegate.testing import Script, ScriptedAgent, load_script
from tests.helpers.cli import phasegate
from tests.helpers.scenarios import EXAMPLE
from tests.helpers.service import running_service

ONE_STAGE: dict[str, Any] = {
    "name": "one",
    "stages": [
        {"name": "spec", "prompt": "Write spec.md.", "exit_when": [{"file_exists": "spec.md"}]}
    ],
}
WRITE_SPEC: list[dict[str, Any]] = [
    {"tools": [{"Write": {"file_path": "spec.md", "content": "spec\n"}}]},
    {"when": "tool_result", "text": "Spec written.\n\n<promise>DONE</promise>"},
]


def _agent(replies: list[dict[str, Any]]) -> ScriptedAgent:
    return ScriptedAgent(Script.model_validate({"replies": replies}))


def test_a_task_runs_with_the_task_runner(task: Task, project: Path) -> None:
    """A task gives a run report, judged in the mode the options name."""
    agent = ScriptedAgent(load_script(EXAMPLE / "model.yaml"))
    report = asyncio.run(run_definition(task, project, agent, RunOptions(mode="gate")))
    assert isinstance(report, RunReport)
    assert (report.mode, report.verdict) == ("gate", "accepted")


def test_a_pipeline_runs_with_the_pipeline_runner_in_the_isolation_asked(tmp_path: Path) -> None:
    """A pipeline gives a pipeline report, with the options' isolation."""
    pipeline = Pipeline.model_validate(ONE_STAGE)
    options = RunOptions(isolation="process")
    report = asyncio.run(run_definition(pipeline, tmp_path, _agent(WRITE_SPEC), options))
    assert isinstance(report, PipelineReport) and not isinstance(report, LoopReport)
    assert (report.isolation, report.verdict) == ("process", "accepted")


def test_a_loop_runs_with_the_loop_runner(tmp_path: Path) -> None:
    """A Ralph loop gives a loop report: its promise said, the iterations counted."""
    loop = make_loop(prompt="Write spec.md.", promise="DONE", max_iterations=3)
    report = asyncio.run(run_definition(loop, tmp_path, _agent(WRITE_SPEC)))
    assert isinstance(report, LoopReport)
    assert (report.verdict, report.promise_said, report.iterations) == ("accepted", True, 1)


def test_the_time_limit_and_retries_become_one_retry_policy() -> None:
    """``timeout`` bounds the whole run with its retries; unset options keep the defaults."""
    assert RunOptions().retry_policy() == RetryPolicy()
    policy = RunOptions(timeout=90, retries=0).retry_policy()
    assert (policy.max_total, policy.session_retries) == (90, 0)
    assert policy.initial_delay == RetryPolicy().initial_delay


def _essentials(report: dict[str, Any]) -> dict[str, Any]:
    """What must agree between entry points (ids, times and paths differ by design)."""
    return {
        "verdict": report["verdict"],
        "phases": [
            (p["name"], p["status"], p["attempts"], p["files_changed"]) for p in report["phases"]
        ],
        "summary": report["summary"],
        "files_changed": report["files_changed"],
    }


def _example(root: Path) -> Path:
    """A copy of the fix-vulnerability example under ``root``."""
    copy = root / "example"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("README.md"))
    return copy


@pytest.mark.cli
def test_every_entry_point_gives_the_same_report_for_the_same_definition(tmp_path: Path) -> None:
    """run, execute, the service and a batch unit run the example through the one factory
    and the one runner, against the same model script: the same verdict, phases, attempts,
    files and summary."""
    example = _example(tmp_path)
    reports: dict[str, dict[str, Any]] = {}

    work = shutil.copytree(example / "project", tmp_path / "run")
    done = phasegate("run", example / "task.yaml", "-w", work, "--model-script",
                     example / "model.yaml", "--json", "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    reports["run"] = json.loads(done.stdout)

    work = shutil.copytree(example / "project", tmp_path / "execute")
    planned = phasegate("plan", example / "task.yaml", "-w", work)
    assert planned.returncode == 0, planned.stderr
    (tmp_path / "plan.json").write_text(planned.stdout)
    done = phasegate("execute", example / "task.yaml", "--plan", tmp_path / "plan.json",
                     "-w", work, "--model-script", example / "model.yaml")  # fmt: skip
    assert done.returncode == 0, done.stderr
    reports["execute"] = json.loads(done.stdout.splitlines()[-1])["report"]

    batch = tmp_path / "batch.yaml"
    item = {"task": "example/task.yaml", "workdir": "example/project",
            "model_script": "example/model.yaml"}  # fmt: skip
    batch.write_text(yaml.safe_dump({"items": [item]}))
    done = phasegate("batch", "run", batch, "--out", tmp_path / "out", "-q")
    assert done.returncode == 0, done.stderr
    (unit,) = (tmp_path / "out" / "units").glob("*/report.json")
    reports["batch"] = json.loads(unit.read_text())

    with running_service(tmp_path, "--model-script", example / "model.yaml") as service:
        client = service.client()
        run = service.start_run(client, task="example/task.yaml", workdir="example/project",
                                copy_workdir=True)  # fmt: skip
        reports["service"] = service.wait(client, run["id"])["report"]

    expected = _essentials(reports["run"])
    assert expected["verdict"] == "accepted"
    assert {name: _essentials(report) for name, report in reports.items()} == dict.fromkeys(
        reports, expected
    )


@pytest.mark.cli
def test_the_cost_cap_holds_with_a_model_script_wherever_the_run_starts(tmp_path: Path) -> None:
    """``run --model-script --max-cost`` used to drop the cap and accept; now it stops the
    run as a batch unit with the same cap does."""
    example = _example(tmp_path)
    work = shutil.copytree(example / "project", tmp_path / "run")
    done = phasegate("run", example / "task.yaml", "-w", work, "--model-script",
                     example / "model.yaml", "--max-cost", "0.000001", "--json", "-q")  # fmt: skip
    assert done.returncode == 3, done.stderr
    from_cli = json.loads(done.stdout)

    batch = tmp_path / "batch.yaml"
    item = {"task": "example/task.yaml", "workdir": "example/project",
            "model_script": "example/model.yaml", "max_cost": 0.000001}  # fmt: skip
    batch.write_text(yaml.safe_dump({"items": [item]}))
    phasegate("batch", "run", batch, "--out", tmp_path / "out", "-q")
    (unit,) = (tmp_path / "out" / "units").glob("*/report.json")
    from_batch = json.loads(unit.read_text())

    for report in (from_cli, from_batch):
        assert report["verdict"] == "error"
        assert "cost cap" in report["error"]


def test_a_pipelines_toolset_reaches_the_agent_in_every_session(tmp_path: Path) -> None:
    """Offered Write only: reading a file that exists is no such tool (the script goes on
    only after that error), and the Write that follows passes."""
    (tmp_path / "notes.md").write_text("notes\n")
    pipeline = Pipeline.model_validate({**ONE_STAGE, "toolset": ["Write"]})
    replies = [{"tools": [{"Read": {"file_path": "notes.md"}}]},
               {"when": "tool_error", **WRITE_SPEC[0]}, WRITE_SPEC[1]]  # fmt: skip
    report = asyncio.run(run_definition(pipeline, tmp_path, _agent(replies)))
    assert isinstance(report, PipelineReport)
    assert report.verdict == "accepted"
    assert (tmp_path / "spec.md").read_text() == "spec\n"
