"""examples/two-phase end to end through the real CLI: a Claude Code session follows the
skill with its Bash tool (plan, ask, plan again, execute), and the task runs with the values
the project showed and the person gave."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from phasegate import load_task, plan_task

pytestmark = pytest.mark.cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "two-phase"


def outer_tools(name: str) -> list[dict[str, object]]:
    """The inputs of every ``name`` call in the session's scripted model."""
    replies = yaml.safe_load((EXAMPLE / "outer-model.yaml").read_text())["replies"]
    return [call[name] for reply in replies for call in reply.get("tools", []) if name in call]


def test_the_session_plans_asks_and_executes_and_the_task_ran_with_every_value(
    tmp_path: Path,
) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE / "run_offline.py"), "--workdir", str(tmp_path)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stdout.rstrip().endswith(f"session: accepted; the work is in {tmp_path}/project")
    deploy = (tmp_path / "project" / ".github" / "workflows" / "deploy.yml").read_text()
    assert "platform team" in deploy and "flyctl deploy" in deploy
    plan = json.loads((tmp_path / "plan.json").read_text())
    assert plan["status"] == "ready"
    assert plan["responses"] == {"target": "Fly.io", "team": "platform"}
    results = [json.loads(line) for line in done.stdout.splitlines()
               if line.startswith('{"type": "result"')]  # fmt: skip
    assert [r["success"] for r in results] == [True]
    assert results[0]["created_files"] == [".github/workflows/deploy.yml"]
    assert results[0]["inputs"]["ci"].startswith("file_exists")

    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    again = subprocess.run(
        ["phasegate", "execute", "task.yaml", "--workdir", "project", "--plan", "plan.json",
         "--idempotency-key", "invoices-deploy-1", "--model-script", "inner-model.yaml"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "PATH": path},
    )  # fmt: skip
    (replayed,) = [json.loads(line) for line in again.stdout.splitlines()]
    assert again.returncode == 0 and replayed["replayed"] is True


def test_the_session_asks_exactly_the_questions_the_plan_returns() -> None:
    """The AskUserQuestion input is the plan's own object for the example project."""
    plan = plan_task(load_task(EXAMPLE / "task.yaml"), EXAMPLE / "project", questions_per_turn=2)
    assert outer_tools("AskUserQuestion") == [plan.ask_user_question]
    assert plan.missing_info == ("target", "team")


def test_the_session_runs_the_commands_the_skill_teaches() -> None:
    skill = (EXAMPLE / ".claude" / "skills" / "phasegate-two-phase" / "SKILL.md").read_text()
    assert skill.startswith("---\nname: phasegate-two-phase\ndescription: ")
    taught = [
        "phasegate plan TASK --workdir DIR --questions-per-turn 2",
        "phasegate execute TASK --workdir DIR --plan plan.json --idempotency-key KEY",
    ]
    assert all(form in skill for form in taught)
    commands = [str(call["command"]) for call in outer_tools("Bash")]
    shapes = [re.escape(form).replace("TASK", r"\S+").replace("DIR", r"\S+").replace("KEY", r"\S+")
              for form in taught]  # fmt: skip
    assert [any(re.match(shape, command) for shape in shapes) for command in commands] == [
        True, True, True,
    ]  # fmt: skip
    settings = json.loads((EXAMPLE / ".claude" / "settings.json").read_text())
    assert settings["permissions"]["allow"] == [
        "Bash(phasegate plan:*)",
        "Bash(phasegate execute:*)",
    ]
