"""From a plan and the last answers to the values a run uses: resolve_inputs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from phasegate.errors import InputsInvalidError, StalePlanError
from phasegate.planning.reference import plan_task
from phasegate.planning.values import resolve_inputs
from tests.helpers.inputs import ci_task, python_project


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A Python project the CI task can infer four of its six inputs from."""
    return python_project(tmp_path / "project")


def test_values_merge_inferred_and_answers_with_their_provenance(project: Path) -> None:
    """New answers win over the plan's; each value says where it came from."""
    plan = plan_task(ci_task(), project, responses={"target": "AWS"})

    values = resolve_inputs(ci_task(), project, plan, {"team": "core", "target": "Fly.io"})

    assert values.as_text() == {
        "ci": "GitHub Actions",
        "language": "Python",
        "project": "demo",
        "tools": "pytest, Ruff",
        "target": "Fly.io",
        "team": "core",
    }
    assert values.provenance["target"] == "response"
    assert values.provenance["tools"].startswith("detect tools:")


def test_a_missing_required_answer_is_refused_with_every_problem(project: Path) -> None:
    """team missing and target TBD: one error listing both, exit code 2."""
    plan = plan_task(ci_task(), project)

    with pytest.raises(InputsInvalidError) as caught:
        resolve_inputs(ci_task(), project, plan, {"target": "TBD"})

    assert [problem.field for problem in caught.value.errors] == ["target", "team"]
    assert caught.value.exit_code == 2


def test_a_plan_whose_files_changed_is_stale(project: Path) -> None:
    """Renaming the project in pyproject.toml after planning: plan again."""
    plan = plan_task(ci_task(), project, responses={"target": "AWS"})
    (project / "pyproject.toml").write_text('[project]\nname = "renamed"\n')

    with pytest.raises(StalePlanError, match="plan again") as caught:
        resolve_inputs(ci_task(), project, plan, {"team": "core"})
    assert "files, git facts or environment variables it read changed" in str(caught.value)


def test_a_plan_for_another_version_of_the_task_is_stale(project: Path) -> None:
    """Another task definition, the same files: plan again."""
    plan = plan_task(ci_task(), project)
    with pytest.raises(StalePlanError, match="the task or pipeline changed"):
        resolve_inputs(ci_task(description="changed"), project, plan, {})


def test_a_plan_read_back_from_its_json_resolves_the_same(project: Path) -> None:
    """The JSON a plan prints is enough to execute it later."""
    from phasegate.planning.plan import Plan

    plan = plan_task(ci_task(), project, responses={"target": "AWS"})
    again = Plan.model_validate_json(plan.to_json())
    values = resolve_inputs(ci_task(), project, again, {"team": "core"})
    assert values.as_text()["target"] == "AWS"


def test_answers_given_as_a_list_of_turns_resolve_as_plan_reads_them(project: Path) -> None:
    """The per-turn list plan takes works here too; later turns win."""
    plan = plan_task(ci_task(), project)
    turns: list[dict[str, Any]] = [
        {"target": "AWS"},
        {"answers": {"Which team owns it?": "core"}},
        {"target": "Fly.io"},
    ]
    values = resolve_inputs(ci_task(), project, plan, turns)
    assert (values.as_text()["target"], values.as_text()["team"]) == ("Fly.io", "core")
