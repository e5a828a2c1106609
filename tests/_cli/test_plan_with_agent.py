"""`phasegate plan --agent claude` through the real CLI and the scripted model: a read-only
clarify phase, checked by the clarification rules, that can neither write nor bend the rules."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from phasegate.phases.inputs import TaskInput
from phasegate.phases.loading import load_task
from phasegate.planning.questions import question_for
from tests.helpers.cli import phasegate
from tests.helpers.inputs import (
    CI_TASK,
    DECISION_EXAMPLE,
    PREFLIGHTS_EXAMPLE,
    python_project,
    snapshot,
)

pytestmark = pytest.mark.cli

TARGET = TaskInput.model_validate(next(i for i in CI_TASK["inputs"] if i["id"] == "target"))
ASK_TARGET: dict[str, Any] = question_for(TARGET).model_dump(mode="json")
GOOD: dict[str, Any] = {
    "inferred": {"team": {"value": "core", "source": "CODEOWNERS"}},
    "questions": [ASK_TARGET],
}
"""The team read from CODEOWNERS; the first missing input asked, as declared."""


def answer(proposal: dict[str, Any]) -> str:
    return f"```json\n{json.dumps(proposal)}\n```"


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    """The CI task file and a Python project whose CODEOWNERS names the team."""
    task = tmp_path / "task.json"
    task.write_text(json.dumps(CI_TASK))
    root = python_project(tmp_path / "project")
    (root / "CODEOWNERS").write_text("* @core\n")
    return task, root


def plan_with(tmp_path: Path, task: Path, root: Path, replies: list[dict[str, Any]]) -> Any:
    """Run `phasegate plan --agent claude` with a scripted model giving ``replies``."""
    script = tmp_path / "model.yaml"
    script.write_text(yaml.safe_dump({"replies": replies}))
    return phasegate("plan", task, "--workdir", root, "--agent", "claude",
                     "--model-script", script, "--max-attempts", "2")  # fmt: skip


def test_an_accepted_clarify_phase_adds_what_the_agent_read_and_changes_nothing(
    project: tuple[Path, Path], tmp_path: Path
) -> None:
    task, root = project
    before = snapshot(root)
    done = plan_with(tmp_path, task, root, [
        {"tools": [{"Read": {"file_path": "CODEOWNERS"}}]},
        {"text": answer(GOOD)},
    ])  # fmt: skip
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert plan["inferred"]["team"] == {"value": "core", "source": "agent: CODEOWNERS"}
    assert plan["inferred"]["project"]["source"].startswith("file_value")  # the rules first
    assert [q["id"] for q in plan["questions"]] == ["target"]
    assert plan["missing_info"] == ["target"]
    assert snapshot(root) == before


@pytest.mark.parametrize(
    ("wrong", "feedback", "code"),
    [
        ({**GOOD, "questions": [question_for(TaskInput.model_validate(i)).model_dump(mode="json")
                                for i in CI_TASK["inputs"][:4]]}, "at most 1", "answer_refused"),
        ({**GOOD, "questions": [{**ASK_TARGET, "default": "TBD"}]}, "placeholder",
         "placeholder_value"),
    ],
    ids=["four questions", "a TBD default"],
)  # fmt: skip
def test_a_proposal_that_breaks_the_rules_gets_feedback_and_is_corrected(
    project: tuple[Path, Path], tmp_path: Path, wrong: dict[str, Any], feedback: str, code: str
) -> None:
    """The corrected answer comes only after feedback naming the broken rule."""
    task, root = project
    done = plan_with(tmp_path, task, root, [
        {"text": answer(wrong)},
        {"when": "user", "contains": feedback, "text": answer(GOOD)},
    ])  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"gate check 1: phase 1 (clarify): {code}" in done.stderr
    assert json.loads(done.stdout)["inferred"]["team"]["source"] == "agent: CODEOWNERS"


def test_a_clarify_phase_that_tries_to_edit_a_file_is_rejected_and_the_file_unchanged(
    project: tuple[Path, Path], tmp_path: Path
) -> None:
    """Claude Code refuses the edit in plan mode; the attempt alone rejects the plan."""
    task, root = project
    before = snapshot(root)
    edit = {"Edit": {"file_path": "app.py", "old_string": "hi", "new_string": "bye"}}
    done = plan_with(tmp_path, task, root, [{"tools": [edit]}, {"text": answer(GOOD)}])
    assert done.returncode == 1
    assert done.stdout == ""
    assert "read-only" in done.stderr and "Edit" in done.stderr
    assert snapshot(root) == before


def test_a_proposal_asking_a_question_that_does_not_apply_gets_feedback_and_is_corrected(
    tmp_path: Path,
) -> None:
    """The decision record: the agent reads the category (Database) from the project and
    first asks the authentication question; the gate names the condition, and the corrected
    proposal asks the database question in the same turn as the inferred category."""
    task = DECISION_EXAMPLE / "task.yaml"
    root = tmp_path / "project"
    shutil.copytree(DECISION_EXAMPLE / "project", root)
    (root / "migrations").mkdir()
    (root / "migrations" / "0001.sql").write_text("CREATE TABLE orders (id int);\n")
    inferred = {"category": {"value": "Database", "source": "migrations/0001.sql"}}
    asks = {item.id: question_for(item).model_dump(mode="json") for item in load_task(task).inputs}
    wrong = {"inferred": inferred, "questions": [asks["auth_strategy"]]}
    right = {"inferred": inferred, "questions": [asks["db_type"]]}

    done = plan_with(tmp_path, task, root, [
        {"text": answer(wrong)},
        {"when": "user", "contains": "Do not ask 'auth_strategy': it does not apply",
         "text": answer(right)},
    ])  # fmt: skip

    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert plan["inferred"]["category"]["source"] == "agent: migrations/0001.sql"
    assert [q["id"] for q in plan["questions"]] == ["db_type"] and plan["turn"] == 1
    assert plan["not_applicable"] == ["auth_strategy", "frontend_framework", "api_style",
                                      "hosting"]  # fmt: skip


def test_the_agent_planner_asks_a_six_option_choice_with_every_option_and_other_last(
    tmp_path: Path,
) -> None:
    """A proposal offering only the first three categories gets feedback naming all six;
    the corrected one is accepted, and the plan relays the question in groups."""
    task = load_task(PREFLIGHTS_EXAMPLE / "task.yaml")
    full = question_for(task.inputs[0]).model_dump(mode="json")
    cut = {**full, "options": full["options"][:3]}
    root = tmp_path / "project"
    root.mkdir()
    done = plan_with(tmp_path, PREFLIGHTS_EXAMPLE / "task.yaml", root, [
        {"text": answer({"inferred": {}, "questions": [cut]})},
        {"when": "user", "contains": "'Infra', 'Other (specify)'",
         "text": answer({"inferred": {}, "questions": [full]})},
    ])  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "gate check 1: phase 1 (clarify)" in done.stderr  # the cut proposal was refused
    plan = json.loads(done.stdout)
    six = ["Frontend", "Backend", "Database", "Authentication", "Infra", "Other (specify)"]
    assert [o["label"] for o in plan["questions"][0]["options"]] == six
    assert len(plan["ask_user_question"]["questions"][0]["options"]) == 3
