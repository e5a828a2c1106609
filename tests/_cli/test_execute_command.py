"""`phasegate execute` through the real CLI against a scripted model server this test owns,
so the model's requests can be counted: JSON lines, refusals before any request, idempotency."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from phasegate.planning.reference import plan_task
from phasegate.agents.scripted.model_server import ScriptedModelServer
from phasegate.agents.scripted.script import Script
from tests.helpers.inputs import CI_TASK, ci_task, python_project

pytestmark = pytest.mark.cli

PROMPT = (
    "Configure GitHub Actions for this Python project named demo (tools: pytest, Ruff); "
    "deploy to Fly.io, owned by core."
)
DEPLOY = ".github/workflows/deploy.yml"
MODEL = Script.model_validate({"replies": [
    {"contains": PROMPT, "tools": [{"Write": {"file_path": DEPLOY, "content": "on: push\n"}}]},
    {"text": "PHASE 1 COMPLETE: configured"},
]})  # fmt: skip
"""Writes the deploy workflow only when the prompt holds every substituted value."""
HANGING = Script.model_validate({"replies": [{"hang": True}]})
ANSWERS = json.dumps({"target": "Fly.io", "team": "core"})


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The CI task file, the Python project, and a plan of it with no answers yet."""
    task = tmp_path / "task.json"
    task.write_text(json.dumps(CI_TASK))
    project = python_project(tmp_path / "project")
    plan = tmp_path / "plan.json"
    plan.write_text(plan_task(ci_task(), project).to_json())
    return task, project, plan


def execute(server: ScriptedModelServer, task: Path, project: Path, plan: Path,
            *args: str) -> tuple[int, list[dict[str, Any]], str]:  # fmt: skip
    """Run `phasegate execute` pointed at ``server``; exit code, stdout lines, stderr."""
    done = subprocess.run(
        [sys.executable, "-m", "phasegate", "execute", str(task), "--workdir", str(project),
         "--plan", str(plan), *args],
        env={**os.environ, **server.env()}, capture_output=True, text=True, timeout=180,
        check=False,
    )  # fmt: skip
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    return done.returncode, lines, done.stderr


def test_an_accepted_execution_ran_with_the_answers_and_inferred_values_substituted(
    setup: tuple[Path, Path, Path],
) -> None:
    """The model only writes the deploy workflow when its prompt holds every value: the
    result names that file as created, and each value keeps where it came from."""
    task, project, plan = setup
    with ScriptedModelServer(MODEL) as server:
        code, lines, stderr = execute(server, task, project, plan, "--responses", ANSWERS)
        assert PROMPT in json.dumps(server.main_requests()[0].body)
    assert code == 0, stderr
    *progress, result = lines
    assert {line["type"] for line in progress} == {"progress"}
    assert [line["step"] for line in progress] == list(range(1, len(progress) + 1))
    assert progress[-1]["percent"] == 100
    assert {"phase.started", "phase.gate"} <= {line["event"] for line in progress}
    assert result["type"] == "result" and result["success"] is True
    assert result["verdict"] == "accepted" and "error" not in result
    assert result["created_files"] == [DEPLOY] and result["modified_files"] == []
    assert result["report"]["phases"][0]["status"] == "accepted"
    assert result["inputs"]["team"] == "response"
    assert result["inputs"]["project"] != "response"  # inferred from pyproject.toml


def test_a_stale_plan_is_refused_before_any_model_request(
    setup: tuple[Path, Path, Path],
) -> None:
    """The project was renamed after planning: exit 2, a result line saying to plan again."""
    task, project, plan = setup
    (project / "pyproject.toml").write_text('[project]\nname = "renamed"\n')
    with ScriptedModelServer(MODEL) as server:
        code, lines, stderr = execute(server, task, project, plan, "--responses", ANSWERS)
        assert server.requests == []
    assert code == 2
    (result,) = lines
    assert result["success"] is False and result["error"]["code"] == "stale_plan"
    assert "phasegate plan" in result["error"]["recovery"]
    assert "plan again" in stderr


def test_a_missing_required_answer_is_refused_before_any_model_request(
    setup: tuple[Path, Path, Path],
) -> None:
    """No team, and a placeholder for the target: both listed with what would do."""
    task, project, plan = setup
    with ScriptedModelServer(MODEL) as server:
        code, lines, _ = execute(server, task, project, plan, "--responses", '{"target": "TBD"}')
        assert server.requests == []
    assert code == 2
    (result,) = lines
    assert result["error"]["code"] == "invalid_inputs"
    assert [error["field"] for error in result["error"]["errors"]] == ["target", "team"]
    assert all(error["requirement"] for error in result["error"]["errors"])


def test_the_same_idempotency_key_replays_the_result_without_a_model_request(
    setup: tuple[Path, Path, Path],
) -> None:
    """The second call prints the kept result (marked replayed) and asks the model nothing;
    the same key with other answers is refused."""
    task, project, plan = setup
    key = ("--idempotency-key", "ci-setup-1")
    with ScriptedModelServer(MODEL) as server:
        first_code, first, _ = execute(server, task, project, plan, "--responses", ANSWERS, *key)
        asked = len(server.requests)
        code, again, _ = execute(server, task, project, plan, "--responses", ANSWERS, *key)
        assert len(server.requests) == asked > 0
        other = json.dumps({"target": "AWS", "team": "core"})
        reused_code, reused, _ = execute(server, task, project, plan, "--responses", other, *key)
        assert len(server.requests) == asked
    assert first_code == code == 0
    (replayed,) = again
    assert replayed["replayed"] is True
    assert {k: v for k, v in replayed.items() if k != "replayed"} == first[-1]
    assert reused_code == 2 and reused[-1]["error"]["code"] == "idempotency_key_reused"


def test_a_killed_execution_leaves_no_result_and_the_key_runs_again(
    setup: tuple[Path, Path, Path],
) -> None:
    """SIGKILL while the model hangs: no kept result, no half-written file; the same key
    then runs the task for real."""
    task, project, plan = setup
    command = [sys.executable, "-m", "phasegate", "execute", str(task), "--workdir",
               str(project), "--plan", str(plan), "--responses", ANSWERS,
               "--idempotency-key", "k"]  # fmt: skip
    with (
        ScriptedModelServer(HANGING) as server,
        subprocess.Popen(command, env={**os.environ, **server.env()}, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         start_new_session=True) as child,
    ):  # fmt: skip
        assert child.stdout is not None
        while json.loads(child.stdout.readline())["event"] != "phase.started":
            pass
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    kept = project / ".phasegate" / "executions"
    assert [p.suffix for p in kept.iterdir()] == [".lock"]
    with ScriptedModelServer(MODEL) as server:
        code, lines, _ = execute(server, task, project, plan, "--responses", ANSWERS,
                                 "--idempotency-key", "k")  # fmt: skip
        assert server.requests
    assert code == 0 and "replayed" not in lines[-1]
