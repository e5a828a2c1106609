"""A task with inputs and a small project for it: shared by the planning, runner and CLI
tests of task inputs."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from phasegate.phases.loading import task_from_mapping
from phasegate.phases.model import Task
from phasegate.planning.reference import plan_task

CI_TASK: dict[str, Any] = {
    "name": "configure-ci",
    "phases": [
        {
            "name": "write",
            "instructions": "Configure {{ ci }} for this {{ language }} project named "
            "{{ project }} (tools: {{ tools }}); deploy to {{ target }}, owned by {{ team }}.",
            "marker": "configured",
        }
    ],
    "inputs": [
        {
            "id": "ci",
            "question": "Which CI service should run the checks?",
            "header": "CI",
            "type": "choice",
            "options": [
                {"label": "GitHub Actions", "description": ".github/workflows"},
                {"label": "GitLab CI", "description": ".gitlab-ci.yml"},
            ],
            "infer": [
                {"file_exists": ".github/workflows/*.yml", "value": "GitHub Actions"},
                {"file_exists": ".gitlab-ci.yml", "value": "GitLab CI"},
            ],
        },
        {
            "id": "language",
            "question": "Which language is the project written in?",
            "header": "Language",
            "infer": [{"detect": "language"}],
        },
        {
            "id": "project",
            "question": "What is the project called?",
            "header": "Project",
            "infer": [{"file_value": {"path": "pyproject.toml", "key": "project.name"}}],
        },
        {
            "id": "tools",
            "question": "Which tools should CI run?",
            "header": "Tools",
            "type": "multi_choice",
            "options": [{"label": "pytest"}, {"label": "Ruff"}, {"label": "mypy"}],
            "infer": [{"detect": "tools"}],
        },
        {
            "id": "target",
            "question": "Where should it deploy?",
            "header": "Target",
            "type": "choice",
            "options": [{"label": "Fly.io"}, {"label": "AWS"}],
        },
        {"id": "team", "question": "Which team owns it?", "header": "Team"},
    ],
}
"""Four inputs the project reveals (ci, language, project, tools), two it cannot."""


DECISION_EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "decision-record"
"""The Preflights flow as a task: a category, then one targeted question per category."""
PREFLIGHTS_EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "preflights"
"""The same flow with the seed's own six-option category question (issue 45)."""


def ci_task(**changes: Any) -> Task:
    """The CI task, with top-level keys replaced by ``changes``."""
    return task_from_mapping({**CI_TASK, **changes})


def python_project(root: Path) -> Path:
    """A Python project with pytest and Ruff configured and a GitHub Actions workflow."""
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / ".github" / "workflows" / "ci.yml").write_text("on: push\n")
    (root / "pyproject.toml").write_text(
        '[project]\nname = "demo"\n[tool.pytest.ini_options]\n[tool.ruff]\n'
    )
    (root / "app.py").write_text("print('hi')\n")
    return root


def planned_ci_task(folder: Path) -> tuple[Path, Path, Path, Path]:
    """The CI task's file, a project, its plan, and a model script that marks the phase, all
    written under ``folder``: what ``phasegate execute`` needs."""
    task = folder / "task.json"
    task.write_text(json.dumps(CI_TASK))
    project = python_project(folder / "project")
    plan = folder / "plan.json"
    plan.write_text(plan_task(ci_task(), project).to_json())
    script = folder / "model.yaml"
    script.write_text('replies:\n  - text: "PHASE 1 COMPLETE: configured"\n')
    return task, project, plan, script


def snapshot(root: Path) -> dict[str, tuple[str, int]]:
    """Every path under ``root`` with its content digest (or ``dir``) and mtime."""
    found: dict[str, tuple[str, int]] = {}
    for path in sorted(root.rglob("*")):
        key = path.relative_to(root).as_posix()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
        found[key] = (digest, path.stat().st_mtime_ns)
    return found
