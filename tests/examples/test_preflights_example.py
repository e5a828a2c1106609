"""examples/preflights: the seed's own flow. Turn 1 asks the six-option category question
(relayed to AskUserQuestion in groups), each category leads to exactly its one targeted
question, "Other (specify)" is first-class on both, TBD is refused; execute runs the decision
offline through the real CLI with a category typed through Other."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from phasegate import Plan, load_task, plan_task, resolve_inputs
from phasegate.planning.ask_user_question import TOOL_OPTIONS
from tests.helpers.inputs import PREFLIGHTS_EXAMPLE

TASK = load_task(PREFLIGHTS_EXAMPLE / "task.yaml")
PROJECT = PREFLIGHTS_EXAMPLE / "project"
CATEGORY = "What type of change is this?"
GROUPS = {"Frontend": "Frontend / Backend / Database", "Backend": "Frontend / Backend / Database",
          "Database": "Frontend / Backend / Database", "Authentication": "Authentication / Infra",
          "Infra": "Authentication / Infra"}  # fmt: skip
TARGETED = {
    "Authentication": ("auth_strategy", "Which authentication approach?", "OAuth"),
    "Database": ("db_type", "Which database type?", "PostgreSQL"),
    "Frontend": ("frontend_framework", "Which framework?", "Svelte"),
    "Backend": ("api_style", "Which API style?", "GraphQL"),
    "Infra": ("hosting", "Which hosting approach?", "Serverless"),
}
"""Each category, the one input it leads to, its question, and an answer to it."""


def asked_labels(plan: Plan) -> list[list[str]]:
    asked = plan.ask_user_question or {"questions": []}
    return [[option["label"] for option in q["options"]] for q in asked["questions"]]


def test_the_category_question_has_the_seed_s_six_options_other_last() -> None:
    plan = plan_task(TASK, PROJECT)

    (question,) = plan.questions
    six = ["Frontend", "Backend", "Database", "Authentication", "Infra", "Other (specify)"]
    assert [o.label for o in question.options] == six
    first_step = ["Frontend / Backend / Database", "Authentication / Infra", "Other (specify)"]
    assert asked_labels(plan) == [first_step]


@pytest.mark.parametrize("category", sorted(TARGETED))
def test_each_category_picked_through_its_group_leads_to_its_one_question_then_stops(
    category: str,
) -> None:
    group = GROUPS[category]
    picked_group = plan_task(TASK, PROJECT, responses={"answers": {CATEGORY: group}})
    assert asked_labels(picked_group) == [[label for label, g in GROUPS.items() if g == group]]
    turn_one = {"answers": {CATEGORY: group, f"{CATEGORY} ({group})": category}}
    second = plan_task(TASK, PROJECT, responses=[turn_one])
    ident, text, answer = TARGETED[category]

    assert second.turn == 2 and [q.id for q in second.questions] == [ident]
    assert asked_labels(second) == [[o.label for o in second.questions[0].options]]
    assert len(asked_labels(second)[0]) <= TOOL_OPTIONS  # 3 options and Other: no groups
    third = plan_task(TASK, PROJECT, responses=[turn_one, {"answers": {text: answer}}])
    assert third.status == "ready" and third.progress == 1.0
    assert third.responses == {"change_category": category, ident: answer}
    assert len(third.not_applicable) == 4


def test_other_on_the_category_resolves_into_the_decision_without_a_targeted_question(
    tmp_path: Path,
) -> None:
    chose_other = plan_task(TASK, PROJECT, responses=[{"answers": {CATEGORY: "Other (specify)"}}])
    assert [q.id for q in chose_other.questions] == ["change_category__other"]
    turns: list[dict[str, Any]] = [
        {"answers": {CATEGORY: "Other (specify)"}},
        {"change_category__other": "Mobile app"},
    ]
    plan = plan_task(TASK, PROJECT, responses=turns)
    assert plan.status == "ready" and len(plan.not_applicable) == 5

    values = resolve_inputs(TASK, PROJECT, plan)
    assert values.as_text()["change_category"] == "Mobile app"
    assert all(values.as_text()[ident] == "" for ident, _, _ in TARGETED.values())


def test_other_on_a_targeted_question_is_its_value() -> None:
    turns: list[dict[str, Any]] = [
        {"change_category": "Authentication"},
        {"auth_strategy": "Other (specify)", "auth_strategy__other": "Passkeys"},
    ]
    plan = plan_task(TASK, PROJECT, responses=turns)

    assert plan.status == "ready"
    assert resolve_inputs(TASK, PROJECT, plan).as_text()["auth_strategy"] == "Passkeys"


def test_tbd_is_refused_and_the_category_asked_again() -> None:
    plan = plan_task(TASK, PROJECT, responses=[{"change_category": "TBD"}])

    assert [error.field for error in plan.validation.errors] == ["change_category"]
    assert [q.id for q in plan.questions] == ["change_category"]


def phasegate(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the installed ``phasegate`` command in ``cwd``."""
    return subprocess.run([sys.executable, "-m", "phasegate", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=180, check=False)  # fmt: skip


@pytest.mark.cli
def test_plan_through_both_steps_and_other_then_execute_the_decision_offline(
    tmp_path: Path,
) -> None:
    shutil.copytree(PREFLIGHTS_EXAMPLE, tmp_path, dirs_exist_ok=True)
    first = phasegate("plan", "task.yaml", "-w", "project", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert len(json.loads(first.stdout)["ask_user_question"]["questions"][0]["options"]) == 3
    turns: list[dict[str, Any]] = [{"answers": {CATEGORY: "Other (specify)"}}]
    second = phasegate("plan", "task.yaml", "-w", "project", "--responses", json.dumps(turns),
                       cwd=tmp_path)  # fmt: skip
    (asked,) = json.loads(second.stdout)["ask_user_question"]["questions"]
    turns.append({"answers": {asked["question"]: "Mobile app"}})
    third = phasegate("plan", "task.yaml", "-w", "project", "--responses", json.dumps(turns),
                      cwd=tmp_path)  # fmt: skip
    assert json.loads(third.stdout)["status"] == "ready"
    (tmp_path / "plan.json").write_text(third.stdout)

    done = phasegate("execute", "task.yaml", "-w", "project", "--plan", "plan.json",
                     "--model-script", "model.yaml", cwd=tmp_path)  # fmt: skip

    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["success"] is True
    assert result["created_files"] == ["docs/decisions/decision.md"]
    assert result["inputs"]["change_category"] == "response"
    assert "Mobile app" in (tmp_path / "project/docs/decisions/decision.md").read_text()
