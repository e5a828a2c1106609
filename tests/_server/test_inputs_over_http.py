"""Plans and input values over HTTP: POST /v1/plans, and inputs on POST /v1/runs, against a
real service running the real CLI offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.helpers.inputs import (
    CI_TASK,
    DECISION_EXAMPLE,
    PREFLIGHTS_EXAMPLE,
    python_project,
    snapshot,
)
from tests.helpers.service import running_service

pytestmark = pytest.mark.cli

PROMPT = (
    "Configure GitHub Actions for this Python project named demo (tools: pytest, Ruff); "
    "deploy to Fly.io, owned by core."
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A root with the CI task, a Python project for it, and a model that writes the deploy
    workflow only when its prompt holds every value."""
    base = tmp_path / "root"
    base.mkdir()
    (base / "ci.json").write_text(json.dumps(CI_TASK))
    python_project(base / "project")
    (base / "model.yaml").write_text(yaml.safe_dump({"replies": [
        {"contains": PROMPT,
         "tools": [{"Write": {"file_path": "deploy.yml", "content": "on: push\n"}}]},
        {"text": "PHASE 1 COMPLETE: configured"},
    ]}))  # fmt: skip
    return base


def test_a_plan_over_http_is_the_reference_plan_and_changes_nothing(root: Path) -> None:
    """The same request gives the same plan; the project is left as it was."""
    before = snapshot(root / "project")
    with running_service(root) as service:
        client = service.client()
        body = {"task": "ci.json", "workdir": "project", "responses": {"target": "AWS"}}
        first, second = client.post("/v1/plans", json=body), client.post("/v1/plans", json=body)
    assert first.status_code == 200, first.text
    assert first.content == second.content
    plan = first.json()
    assert plan["status"] == "needs_answers" and plan["missing_info"] == ["team"]
    assert [q["id"] for q in plan["questions"]] == ["team"]
    assert plan["inferred"]["project"]["value"] == "demo"
    assert snapshot(root / "project") == before


def test_a_run_with_inputs_starts_with_them_substituted_and_says_where_each_came_from(
    root: Path,
) -> None:
    with running_service(root, "--model-script", root / "model.yaml") as service:
        client = service.client()
        plan = client.post("/v1/plans", json={"task": "ci.json", "workdir": "project"}).json()
        run = service.start_run(client, task="ci.json", workdir="project", plan=plan,
                                inputs={"target": "Fly.io", "team": "core"})  # fmt: skip
        finished = service.wait(client, run["id"])
    assert finished["verdict"] == "accepted"
    assert (root / "project" / "deploy.yml").exists()  # the prompt held every value
    assert finished["inputs"]["team"] == "core" and finished["inputs"]["ci"] == "GitHub Actions"
    assert finished["input_sources"]["team"] == "response"
    assert finished["input_sources"]["ci"].startswith("file_exists")


def test_a_run_missing_a_required_input_is_refused_before_it_is_queued(root: Path) -> None:
    with running_service(root) as service:
        client = service.client()
        answer = client.post("/v1/runs", json={"task": "ci.json", "workdir": "project",
                                               "inputs": {"target": "TBD"}})  # fmt: skip
        runs = client.get("/v1/runs").json()["runs"]
    assert answer.status_code == 422
    error = answer.json()["error"]
    assert error["code"] == "invalid_inputs" and error["field"] == "inputs"
    assert "target" in error["message"] and "team" in error["message"]
    assert runs == []


def test_a_run_with_a_stale_plan_is_refused_with_409(root: Path) -> None:
    with running_service(root) as service:
        client = service.client()
        plan = client.post("/v1/plans", json={"task": "ci.json", "workdir": "project"}).json()
        (root / "project" / "pyproject.toml").write_text('[project]\nname = "renamed"\n')
        inputs = {"target": "AWS", "team": "core"}
        body = {"task": "ci.json", "workdir": "project", "plan": plan, "inputs": inputs}
        answer = client.post("/v1/runs", json=body)
    assert answer.status_code == 409
    assert answer.json()["error"]["code"] == "stale_plan"
    assert str(root) not in answer.text


def test_a_plan_for_a_directory_outside_the_root_is_refused_naming_the_field(root: Path) -> None:
    with running_service(root) as service:
        answer = service.client().post("/v1/plans", json={"task": "ci.json", "workdir": ".."})
    assert answer.status_code == 400
    assert answer.json()["error"]["field"] == "workdir"


def test_an_env_rule_never_reads_the_service_s_environment(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Any client may send a task: an env rule naming a secret must not hand it back."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-not-for-clients-1234567890")
    task = {"name": "leak", "phases": [{"name": "a", "instructions": "Key {{ key }}."}],
            "inputs": [{"id": "key", "question": "Which key?", "header": "Key",
                        "infer": [{"env": "ANTHROPIC_API_KEY"}]}]}  # fmt: skip
    with running_service(root) as service:
        client = service.client()
        plan = client.post("/v1/plans", json={"task": task, "workdir": "project"})
        run = client.post("/v1/runs", json={"task": task, "workdir": "project"})
    assert "sk-ant-not-for-clients" not in plan.text + run.text
    assert plan.json()["missing_info"] == ["key"]
    assert run.status_code == 422 and run.json()["error"]["code"] == "invalid_inputs"


def test_conditional_inputs_over_http_plan_only_what_applies_and_refuse_other_answers(
    root: Path,
) -> None:
    """The decision record: a plan after the category asks its one question and lists the
    other categories' inputs as not applicable; a run answering one of those is a 422
    naming it, before anything is queued."""
    task = yaml.safe_load((DECISION_EXAMPLE / "task.yaml").read_text())
    with running_service(root) as service:
        client = service.client()
        body = {"task": task, "workdir": "project", "responses": {"category": "Database"}}
        plan = client.post("/v1/plans", json=body).json()
        answer = client.post("/v1/runs", json={"task": task, "workdir": "project",
                                               "inputs": {"category": "Database",
                                                          "db_type": "MySQL",
                                                          "hosting": "Cloud"}})  # fmt: skip
        runs = client.get("/v1/runs").json()["runs"]
    assert [q["id"] for q in plan["questions"]] == ["db_type"]
    assert plan["not_applicable"] == ["auth_strategy", "frontend_framework", "api_style",
                                      "hosting"]  # fmt: skip
    assert answer.status_code == 422, answer.text
    error = answer.json()["error"]
    assert error["code"] == "invalid_inputs"
    assert (
        "hosting" in error["message"]
        and "asked only when category is 'Infra'" in (error["message"])
    )
    assert runs == []


def test_a_six_option_choice_is_planned_relayed_in_groups_and_its_answer_accepted(
    root: Path,
) -> None:
    """The seed's category question over HTTP: the plan lists all six options, its
    ask_user_question the first step; the group chosen brings its follow-up; the follow-up's
    answer is the value, and a run starts with it."""
    task = yaml.safe_load((PREFLIGHTS_EXAMPLE / "task.yaml").read_text())
    category = "What type of change is this?"
    with running_service(root) as service:
        client = service.client()
        first = client.post("/v1/plans", json={"task": task, "workdir": "project"}).json()
        picked = {"answers": {category: "Authentication / Infra"}}
        second = client.post("/v1/plans", json={"task": task, "workdir": "project",
                                                "responses": picked}).json()  # fmt: skip
        both = {"answers": {**picked["answers"], f"{category} (Authentication / Infra)": "Infra"}}
        third = client.post("/v1/plans", json={"task": task, "workdir": "project",
                                               "responses": [both]}).json()  # fmt: skip
        group_by_id = {"change_category": "Authentication / Infra"}
        by_id = client.post("/v1/plans", json={"task": task, "workdir": "project",
                                               "responses": group_by_id})  # fmt: skip
    (question,) = first["questions"]
    assert len(question["options"]) == 6 and question["options"][-1]["label"] == "Other (specify)"
    assert [o["label"] for o in first["ask_user_question"]["questions"][0]["options"]] == [
        "Frontend / Backend / Database", "Authentication / Infra", "Other (specify)"]  # fmt: skip
    follow_up = second["ask_user_question"]["questions"][0]
    assert [o["label"] for o in follow_up["options"]] == ["Authentication", "Infra"]
    assert third["responses"] == {"change_category": "Infra"}
    assert [q["id"] for q in third["questions"]] == ["hosting"]
    assert by_id.status_code == 200
    (error,) = by_id.json()["validation"]["errors"]
    assert error["field"] == "change_category" and "is the group" in error["problem"]
