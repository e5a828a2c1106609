"""The reference planner's contract: deterministic, read-only, and within the budget."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from phasegate.errors import UsageError
from phasegate.phases.inputs import OTHER_LABEL
from phasegate.phases.loading import task_from_mapping
from phasegate.phases.model import Task
from phasegate.planning.plan import Plan
from phasegate.planning.reference import plan_task
from tests.helpers.inputs import CI_TASK, ci_task, python_project, snapshot


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A Python project the CI task can infer four of its six inputs from."""
    return python_project(tmp_path / "project")


def many_inputs(count: int) -> Task:
    """A task with ``count`` required text inputs nothing infers."""
    inputs = [{"id": f"v{n}", "question": f"Value {n}?", "header": f"V{n}"} for n in range(count)]
    text = " ".join(f"{{{{ v{n} }}}}" for n in range(count))
    return task_from_mapping(
        {"name": "many", "phases": [{"name": "w", "instructions": text}], "inputs": inputs}
    )


def converse(
    task: Task, workdir: Path, per_turn: int, answer: Any = "concrete", *, by_turn: bool = False
) -> list[Plan]:
    """A person answering every question the planner asks, until it asks none: all answers
    in one object, or (``by_turn``) a list with one object per turn."""
    responses: dict[str, Any] = {}
    turns: list[dict[str, Any]] = []
    plans = [plan_task(task, workdir, questions_per_turn=per_turn)]
    while plans[-1].questions and len(plans) < 10:
        answered = {question.id: answer for question in plans[-1].questions}
        responses.update(answered)
        turns.append(answered)
        given: Any = turns if by_turn else responses
        plans.append(plan_task(task, workdir, responses=given, questions_per_turn=per_turn))
    return plans


def test_the_same_call_gives_the_same_bytes(project: Path) -> None:
    """Twice, with the same responses: the same plan_id and the same JSON text."""
    responses = {"target": "AWS"}
    first = plan_task(ci_task(), project, responses=responses)
    second = plan_task(ci_task(), project, responses=responses)
    assert first.to_json() == second.to_json()
    assert first.plan_id == second.plan_id


def test_what_the_project_reveals_is_inferred_with_its_source_and_not_asked(
    project: Path,
) -> None:
    """ci, language, project and tools come from the files; only target is asked."""
    plan = plan_task(ci_task(), project)

    assert {key: entry.value for key, entry in plan.inferred.items()} == {
        "ci": "GitHub Actions",
        "language": "Python",
        "project": "demo",
        "tools": ("pytest", "Ruff"),
    }
    assert plan.inferred["ci"].source == "file_exists: .github/workflows/ci.yml"
    assert plan.inferred["project"].source == "file_value: pyproject.toml project.name"
    assert [q.id for q in plan.questions] == ["target"]
    assert plan.missing_info == ("target", "team")
    assert (plan.status, plan.turn, plan.progress) == ("needs_answers", 1, 0.0)


def test_a_single_choice_ends_with_other_and_choosing_it_asks_the_other_text(
    project: Path,
) -> None:
    """ "Other (specify)" is the last option; choosing it asks target__other next, and the
    typed text becomes the value."""
    first = plan_task(ci_task(), project)
    assert [o.label for o in first.questions[0].options] == ["Fly.io", "AWS", OTHER_LABEL]

    chose_other = plan_task(ci_task(), project, responses={"target": OTHER_LABEL})
    assert [q.id for q in chose_other.questions] == ["target__other"]
    assert "target" in chose_other.missing_info

    typed = plan_task(
        ci_task(), project, responses={"target": OTHER_LABEL, "target__other": "Render"}
    )
    assert "target" not in typed.missing_info
    assert typed.responses["target__other"] == "Render"


@pytest.mark.parametrize("answer", ["TBD", "TODO", "...", "<team name>", "", "   "])
def test_placeholder_answers_are_refused_with_a_requirement_and_never_stored(
    project: Path, answer: str
) -> None:
    """The input stays missing, the error says what a value must be, and the refused answer
    is not kept in the plan's responses."""
    plan = plan_task(ci_task(), project, responses={"target": "AWS", "team": answer})

    assert plan.missing_info == ("team",)
    assert not plan.validation.valid
    (error,) = plan.validation.errors
    assert (error.field, error.provided) == ("team", answer)
    assert "concrete value" in error.requirement
    assert "team" not in plan.responses
    assert [q.id for q in plan.questions] == ["team"]


@pytest.mark.parametrize("by_turn", [False, True])
@pytest.mark.parametrize("per_turn", [1, 2])
@pytest.mark.parametrize("count", [1, 2, 3, 5, 8])
def test_never_more_questions_a_turn_nor_more_turns_than_the_budget(
    tmp_path: Path, per_turn: int, count: int, by_turn: bool
) -> None:
    """At most per_turn (≤ 2) questions a turn, at most 3 turns that ask anything, with the
    answers in one object or one object per turn."""
    plans = converse(many_inputs(count), tmp_path, per_turn, by_turn=by_turn)

    asking = [plan for plan in plans if plan.questions]
    assert all(len(plan.questions) <= per_turn for plan in plans)
    assert len(asking) <= 3
    assert [plan.turn for plan in asking] == list(range(1, len(asking) + 1))
    last = plans[-1]
    if count <= 3 * per_turn:
        assert (last.status, last.progress, last.missing_info) == ("ready", 1.0, ())
    else:
        assert last.status == "invalid"
        assert len(last.missing_info) == count - 3 * per_turn
        assert "turns of questions" in last.validation.errors[0].problem


def test_refused_answers_given_turn_by_turn_spend_their_turns(tmp_path: Path) -> None:
    """Answering TBD forever, one object per turn, ends after three turns of questions."""
    plans = converse(many_inputs(1), tmp_path, 1, answer="TBD", by_turn=True)
    assert [plan.turn for plan in plans if plan.questions] == [1, 2, 3]
    assert plans[-1].status == "invalid"


def test_a_refused_answer_in_one_object_spends_the_turn_that_asked_it(tmp_path: Path) -> None:
    """{"v0": "TBD"} answered turn 1: v0 is asked again in turn 2."""
    plan = plan_task(many_inputs(2), tmp_path, responses={"v0": "TBD"})
    assert (plan.turn, [q.id for q in plan.questions]) == (2, ["v0"])


def test_asking_more_than_two_questions_a_turn_is_refused(project: Path) -> None:
    """questions_per_turn is 1 or 2."""
    with pytest.raises(UsageError) as caught:
        plan_task(ci_task(), project, questions_per_turn=3)
    assert caught.value.option == "questions_per_turn"


def test_plan_leaves_the_work_directory_unchanged(project: Path) -> None:
    """Every file's bytes and mtime, and the list of paths, are the same after planning."""
    (project / ".git").mkdir()
    (project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    before = snapshot(project)
    plan_task(ci_task(), project, responses={"target": "AWS", "team": "core"})
    assert snapshot(project) == before


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    responses=st.dictionaries(
        st.sampled_from(["target", "target__other", "team", "ci", "tools"]),
        st.sampled_from(["AWS", "Other (specify)", "TBD", "", "core", "GitLab CI", "mypy, Ruff"]),
    )
)
def test_progress_is_exactly_one_when_and_only_when_nothing_is_missing(
    project: Path, responses: dict[str, str]
) -> None:
    """Whatever the responses, progress == 1.0 iff missing_info is empty, and
    needs_answers comes with questions."""
    plan = plan_task(ci_task(), project, responses=responses)
    assert (plan.progress == 1.0) == (plan.missing_info == ())
    assert (plan.status == "needs_answers") == bool(plan.questions)
    assert 0.0 <= plan.progress <= 1.0


def test_an_answer_overrides_an_inferred_value_and_unknown_keys_are_errors(
    project: Path,
) -> None:
    """Responses win over inference; an id the task does not have is a validation error."""
    plan = plan_task(
        ci_task(), project, responses={"ci": "GitLab CI", "target": "AWS", "team": "x", "zz": 1}
    )
    assert plan.responses["ci"] == "GitLab CI"
    assert plan.status == "invalid"
    assert [error.field for error in plan.validation.errors] == ["zz"]


def test_the_tool_answer_shape_is_read_like_ids(project: Path) -> None:
    """{"answers": {question text: label}} next to earlier answers by id; own text on a
    single choice is the value."""
    plan = plan_task(
        ci_task(),
        project,
        responses={"target": "AWS", "answers": {"Which team owns it?": "platform"}},
    )
    assert plan.responses == {"target": "AWS", "team": "platform"}
    assert plan.status == "ready"


def test_defaults_fill_inputs_and_are_reported_with_their_source(project: Path) -> None:
    """An input with a default is never asked; the plan shows the default as its source."""
    data = {
        **CI_TASK,
        "inputs": [*CI_TASK["inputs"][:5], {**CI_TASK["inputs"][5], "default": "core"}],
    }
    plan = plan_task(task_from_mapping(data), project, responses={"target": "AWS"})
    assert plan.inferred["team"].source == "default"
    assert plan.status == "ready"


def test_context_and_environment_rules_read_what_the_caller_gives(tmp_path: Path) -> None:
    """A context key and an environment variable named by the task are inferred."""
    data = {
        "name": "ctx",
        "phases": [{"name": "w", "instructions": "{{ op }} {{ who }}"}],
        "inputs": [
            {"id": "op", "question": "Op?", "header": "Op", "infer": [{"context": "run.op"}]},
            {"id": "who", "question": "Who?", "header": "Who", "infer": [{"env": "OWNER"}]},
        ],
    }
    plan = plan_task(
        task_from_mapping(data),
        tmp_path,
        context={"run": {"op": "configure"}},
        environ={"OWNER": "ana"},
    )
    assert {k: (e.value, e.source) for k, e in plan.inferred.items()} == {
        "op": ("configure", "context: run.op"),
        "who": ("ana", "env: OWNER"),
    }
