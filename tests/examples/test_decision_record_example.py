"""examples/decision-record: the Preflights flow as a task. Turn 1 asks the category alone,
each category leads to exactly its one targeted question (asked through AskUserQuestion's
own shapes), then the plan is ready; execute runs it offline through the real CLI."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from phasegate import Plan, load_task, plan_task
from phasegate.planning.ask_user_question import to_ask_user_question
from tests.helpers.inputs import DECISION_EXAMPLE

TASK = load_task(DECISION_EXAMPLE / "task.yaml")
PROJECT = DECISION_EXAMPLE / "project"
CATEGORY = TASK.inputs[0].question
TARGETED = {
    "Authentication": ("auth_strategy", "OAuth"),
    "Database": ("db_type", "PostgreSQL"),
    "Frontend": ("frontend_framework", "Svelte"),
    "Backend": ("api_style", "GraphQL"),
    "Infra": ("hosting", "Serverless"),
}
"""Each category, the one input it leads to, and an answer to that input."""


def tool_answer(plan: Plan, *labels: str) -> dict[str, Any]:
    """What AskUserQuestion answers when a person picks ``labels`` for the plan's questions
    (their own text where a label is none of the options)."""
    questions = plan.ask_user_question["questions"] if plan.ask_user_question else []
    return {"answers": {q["question"]: label for q, label in zip(questions, labels, strict=True)}}


def test_turn_one_asks_only_the_category() -> None:
    plan = plan_task(TASK, PROJECT)

    assert [q.id for q in plan.questions] == ["category"]
    assert plan.missing_info == ("category",)
    assert plan.ask_user_question == to_ask_user_question(plan.questions)
    assert len(plan.ask_user_question["questions"]) == 1


@pytest.mark.parametrize("category", sorted(TARGETED))
def test_each_category_leads_to_exactly_its_one_targeted_question_then_stops(
    category: str,
) -> None:
    """Frontend and Backend are typed as the person's own text; the rest are options."""
    first = plan_task(TASK, PROJECT)
    turn_one = tool_answer(first, category)
    second = plan_task(TASK, PROJECT, responses=[turn_one])
    ident, answer = TARGETED[category]

    assert [q.id for q in second.questions] == [ident]
    assert second.turn == 2 and second.status == "needs_answers"
    assert second.missing_info == (ident,)
    others = {other for other, _ in TARGETED.values()} - {ident}
    assert set(second.not_applicable) == others
    third = plan_task(TASK, PROJECT, responses=[turn_one, tool_answer(second, answer)])
    assert third.status == "ready" and third.questions == () and third.progress == 1.0
    assert third.responses == {"category": category, ident: answer}


def test_other_specify_for_the_category_needs_no_targeted_question() -> None:
    plan = plan_task(TASK, PROJECT, responses={"category": "Other (specify)",
                                                "category__other": "Mobile app"})  # fmt: skip

    assert plan.status == "ready" and plan.questions == ()
    assert len(plan.not_applicable) == len(TARGETED)


def test_other_specify_asks_its_text_first_and_a_typed_category_then_leads_to_its_question() -> (
    None
):
    chose_other = plan_task(TASK, PROJECT, responses=[{"category": "Other (specify)"}])
    assert [q.id for q in chose_other.questions] == ["category__other"]
    assert chose_other.not_applicable == ()  # nothing is decided before the text is typed

    typed = plan_task(TASK, PROJECT, responses=[{"category": "Other (specify)"},
                                                 {"category__other": "backend"}])  # fmt: skip
    assert [q.id for q in typed.questions] == ["api_style"]


@pytest.mark.parametrize(
    ("responses", "field"),
    [
        ([{"category": "TBD"}], "category"),
        ([{"category": "Database"}, {"db_type": "TBD"}], "db_type"),
    ],
)
def test_a_tbd_answer_is_refused_and_its_question_asked_again(
    responses: list[dict[str, str]], field: str
) -> None:
    plan = plan_task(TASK, PROJECT, responses=responses)

    assert [error.field for error in plan.validation.errors] == [field]
    assert "placeholder" in plan.validation.errors[0].problem
    assert [q.id for q in plan.questions] == [field]
    assert field not in plan.responses


def test_an_answer_to_the_question_of_another_category_is_refused() -> None:
    plan = plan_task(TASK, PROJECT, responses={"category": "Database", "auth_strategy": "OAuth"})

    (error,) = plan.validation.errors
    assert error.field == "auth_strategy"
    assert error.problem == "does not apply: it is asked only when category is 'Authentication'"
    assert [q.id for q in plan.questions] == ["db_type"]


def test_an_ask_user_question_answer_to_another_category_s_question_is_refused_too() -> None:
    tool = {"category": "Database", "answers": {"Which authentication approach?": "OAuth"}}

    plan = plan_task(TASK, PROJECT, responses=tool)

    assert [error.field for error in plan.validation.errors] == ["auth_strategy"]
    assert plan.responses == {"category": "Database"}


def test_the_same_request_gives_the_same_bytes() -> None:
    responses = [{"category": "Infra"}]
    first = plan_task(TASK, PROJECT, responses=responses).to_json()
    assert plan_task(TASK, PROJECT, responses=responses).to_json() == first


def phasegate(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the installed ``phasegate`` command in ``cwd``."""
    return subprocess.run([sys.executable, "-m", "phasegate", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=180, check=False)  # fmt: skip


@pytest.mark.cli
def test_plan_ask_and_execute_record_the_decision_with_only_the_inputs_that_applied(
    tmp_path: Path,
) -> None:
    """The CLI plans twice (the second plan with the AskUserQuestion answers), then executes
    offline: the model writes the record only when its prompt holds Authentication and
    OAuth, the other targeted placeholders empty; the result says which inputs applied."""
    shutil.copytree(DECISION_EXAMPLE, tmp_path, dirs_exist_ok=True)
    first = phasegate("plan", "task.yaml", "--workdir", "project", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    asked = json.loads(first.stdout)["ask_user_question"]
    assert [q["question"] for q in asked["questions"]] == [CATEGORY]
    turns = [{"answers": {CATEGORY: "Authentication"}}]
    second = phasegate("plan", "task.yaml", "-w", "project", "--responses", json.dumps(turns),
                       cwd=tmp_path)  # fmt: skip
    asked = json.loads(second.stdout)["ask_user_question"]
    assert [q["question"] for q in asked["questions"]] == ["Which authentication approach?"]
    turns.append({"answers": {"Which authentication approach?": "OAuth"}})
    (tmp_path / "answers.json").write_text(json.dumps(turns))
    third = phasegate("plan", "task.yaml", "-w", "project", "--responses", "@answers.json",
                      cwd=tmp_path)  # fmt: skip
    assert json.loads(third.stdout)["status"] == "ready"
    (tmp_path / "plan.json").write_text(third.stdout)

    done = phasegate("execute", "task.yaml", "--workdir", "project", "--plan", "plan.json",
                     "--model-script", "model.yaml", cwd=tmp_path)  # fmt: skip

    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["success"] is True
    assert result["created_files"] == ["docs/decisions/0001-decision.md"]
    assert result["inputs"] == {
        "category": "response",
        "auth_strategy": "response",
        "db_type": "not_applicable",
        "frontend_framework": "not_applicable",
        "api_style": "not_applicable",
        "hosting": "not_applicable",
    }


@pytest.mark.cli
def test_execute_refuses_an_answer_to_an_input_that_does_not_apply_before_any_agent_starts(
    tmp_path: Path,
) -> None:
    shutil.copytree(DECISION_EXAMPLE, tmp_path, dirs_exist_ok=True)
    (tmp_path / "plan.json").write_text(plan_task(TASK, tmp_path / "project").to_json())
    answers = json.dumps({"category": "Database", "db_type": "MySQL", "hosting": "Cloud"})

    done = phasegate("execute", "task.yaml", "-w", "project", "--plan", "plan.json",
                     "--responses", answers, "--model-script", "model.yaml",
                     cwd=tmp_path)  # fmt: skip

    assert done.returncode == 2
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["error"]["code"] == "invalid_inputs"
    assert [e["field"] for e in result["error"]["errors"]] == ["hosting"]
    assert "asked only when category is 'Infra'" in result["error"]["errors"][0]["problem"]
    assert not (tmp_path / "project" / "docs" / "decisions" / "0001-decision.md").exists()
