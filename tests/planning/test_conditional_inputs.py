"""Planning with `ask_when`: questions in dependency order, inference meeting conditions,
answers to inputs that do not apply refused, the agent planner's proposals checked, and
properties over random condition graphs."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from phasegate.errors import InputsInvalidError
from phasegate.phases.conditions import applicability
from phasegate.phases.loading import task_from_mapping
from phasegate.phases.model import Task
from phasegate.planning.ask_user_question import to_ask_user_question
from phasegate.planning.clarification import check_proposal
from phasegate.planning.clarify import clarify_task, proposal_check
from phasegate.planning.reference import plan_task
from phasegate.planning.values import NOT_APPLICABLE_SOURCE, resolve_inputs

CATEGORY = {"id": "category", "question": "What type of change?", "header": "Category",
            "type": "choice", "options": [{"label": "Database"}, {"label": "Infra"}],
            "infer": [{"context": "category"}]}  # fmt: skip
DB = {"id": "db", "question": "Which database?", "header": "Database", "type": "choice",
      "options": [{"label": "PostgreSQL"}, {"label": "MySQL"}],
      "ask_when": {"category": "Database"}}  # fmt: skip
HOSTING = {"id": "hosting", "question": "Which hosting?", "header": "Hosting",
           "ask_when": {"category": "Infra"}}  # fmt: skip
TEAM = {"id": "team", "question": "Which team owns it?", "header": "Team"}


def task_of(*inputs: dict[str, Any]) -> Task:
    """A one-phase task using every input given."""
    used = " ".join(f"{{{{ {item['id']} }}}}" for item in inputs)
    phases = [{"name": "w", "instructions": f"Do {used}."}]
    return task_from_mapping({"name": "t", "inputs": list(inputs), "phases": phases})


TASK = task_of(CATEGORY, DB, HOSTING, TEAM)


def test_a_dependent_input_waits_for_its_condition_while_an_independent_one_shares_the_turn(
    tmp_path: Path,
) -> None:
    """Two questions a turn: category and team (independent); db only after category."""
    plan = plan_task(TASK, tmp_path, questions_per_turn=2)

    assert [q.id for q in plan.questions] == ["category", "team"]
    assert plan.missing_info == ("category", "team") and plan.not_applicable == ()

    later = plan_task(TASK, tmp_path, questions_per_turn=2,
                      responses=[{"category": "Database", "team": "core"}])  # fmt: skip
    assert [q.id for q in later.questions] == ["db"]
    assert later.not_applicable == ("hosting",) and later.progress == 0.6667


def test_a_dependent_declared_before_its_parent_is_still_asked_after_it(tmp_path: Path) -> None:
    task = task_of(DB, CATEGORY)

    first = plan_task(task, tmp_path, questions_per_turn=2)
    second = plan_task(task, tmp_path, questions_per_turn=2, responses=[{"category": "Database"}])

    assert [q.id for q in first.questions] == ["category"]
    assert [q.id for q in second.questions] == ["db"]


def test_an_inferred_value_meeting_a_condition_makes_its_question_askable_in_the_same_turn(
    tmp_path: Path,
) -> None:
    plan = plan_task(TASK, tmp_path, context={"category": "Database"})

    assert plan.inferred["category"].value == "Database"
    assert [q.id for q in plan.questions] == ["db"] and plan.turn == 1


def test_an_answer_overriding_an_inferred_value_re_evaluates_the_conditions(
    tmp_path: Path,
) -> None:
    plan = plan_task(TASK, tmp_path, context={"category": "Database"},
                     responses=[{"category": "Infra"}])  # fmt: skip

    assert [q.id for q in plan.questions] == ["hosting"]
    assert plan.not_applicable == ("db",)
    assert plan.missing_info == ("hosting", "team")


def test_a_default_meets_a_condition_as_an_inferred_value_does(tmp_path: Path) -> None:
    task = task_of({**CATEGORY, "default": "Infra", "infer": []}, DB, HOSTING, TEAM)

    plan = plan_task(task, tmp_path, questions_per_turn=2)

    assert [q.id for q in plan.questions] == ["hosting", "team"]


def test_a_typed_other_answer_is_the_value_conditions_read(tmp_path: Path) -> None:
    mobile = {"id": "store", "question": "Which store?", "header": "Store",
              "ask_when": {"category": ["Mobile", "Desktop"]}}  # fmt: skip
    task = task_of(CATEGORY, mobile)

    plan = plan_task(task, tmp_path, responses={"category": "Other (specify)",
                                                "category__other": "mobile"})  # fmt: skip

    assert [q.id for q in plan.questions] == ["store"]


def test_an_answer_to_an_input_that_does_not_apply_is_refused_and_not_kept(
    tmp_path: Path,
) -> None:
    plan = plan_task(TASK, tmp_path, responses={"category": "Infra", "db": "MySQL",
                                                "db__other": "x", "team": "core"})  # fmt: skip

    assert [(e.field, e.problem) for e in plan.validation.errors] == [
        ("db", "does not apply: it is asked only when category is 'Database'"),
        ("db__other", "does not apply: it is asked only when category is 'Database'"),
    ]
    assert "db" not in plan.responses and plan.status == "needs_answers"


def test_resolved_values_say_which_inputs_applied_and_render_the_others_empty(
    tmp_path: Path,
) -> None:
    plan = plan_task(TASK, tmp_path)

    values = resolve_inputs(TASK, tmp_path, plan, {"category": "Infra", "hosting": "Fly.io",
                                                   "team": "core"})  # fmt: skip

    assert values.provenance["db"] == NOT_APPLICABLE_SOURCE
    assert values.applied == ("category", "hosting", "team")
    assert values.as_text()["db"] == ""


def test_resolving_refuses_an_answer_to_an_input_that_does_not_apply(tmp_path: Path) -> None:
    plan = plan_task(TASK, tmp_path)
    answers = {"category": "Infra", "hosting": "Fly.io", "team": "core", "db": "MySQL"}

    with pytest.raises(InputsInvalidError) as caught:
        resolve_inputs(TASK, tmp_path, plan, answers)

    assert [e.field for e in caught.value.errors] == ["db"]
    assert "category is 'Database'" in str(caught.value)


def test_resolving_never_requires_an_input_that_does_not_apply(tmp_path: Path) -> None:
    plan = plan_task(TASK, tmp_path)

    with pytest.raises(InputsInvalidError) as caught:
        resolve_inputs(TASK, tmp_path, plan, {"category": "Database"})

    assert [e.field for e in caught.value.errors] == ["db", "team"]


def test_a_proposal_asking_an_input_that_does_not_apply_or_waits_gets_feedback() -> None:
    inputs = TASK.inputs
    not_applicable = check_proposal(inputs, {"inferred": {}, "questions": [{"id": "hosting"}]},
                                    responses={"category": "Database"})  # fmt: skip
    waiting = check_proposal(inputs, {"inferred": {}, "questions": [{"id": "db"}]})

    assert (
        "Do not ask 'hosting': it does not apply (it is asked only when category is "
        in (not_applicable[0])
    )
    assert waiting[0].startswith("Do not ask 'db' yet: it is asked only when category is")
    assert check_proposal(inputs, {"inferred": {}, "questions": [{"id": "db"}]},
                          responses={"category": "Database"}) == []  # fmt: skip


def test_a_proposal_inferring_an_input_that_does_not_apply_gets_feedback() -> None:
    proposal = {
        "inferred": {"category": {"value": "Infra", "source": "fly.toml"},
                     "db": {"value": "MySQL", "source": "docker-compose.yml"}},
        "questions": [{"id": "hosting"}],
    }  # fmt: skip

    feedback = check_proposal(TASK.inputs, proposal)

    assert feedback == [
        "Do not infer 'db': it does not apply (it is asked only when category is 'Database')."
    ]


def test_the_clarify_task_describes_the_conditions_and_its_check_applies_them(
    tmp_path: Path,
) -> None:
    plan = plan_task(TASK, tmp_path, responses={"category": "Infra"})
    task = clarify_task("t", TASK.inputs, plan)
    check = proposal_check(TASK.inputs, plan)

    instructions = task.phases[0].instructions
    assert instructions.count('"ask_when"') == 2
    assert 'Not applicable by their ask_when (never ask or infer these):\n[\n "db"\n]' in (
        instructions
    )
    assert check({"inferred": {}, "questions": [{"id": "hosting"}]}) == []
    assert check({"inferred": {}, "questions": [{"id": "db"}]})[0].startswith("Do not ask 'db'")


# Properties over random condition graphs --------------------------------------------------

LABELS = ("x", "y", "z")


@st.composite
def condition_graphs(draw: st.DrawFn) -> Task:
    """2 to 6 inputs, each a choice (or a multi_choice) of x, y, z; each may depend on any
    input drawn before it (so the graph has no cycle), on values drawn from x, y, z; some
    have defaults, some are optional; declared in a shuffled order."""
    count = draw(st.integers(2, 6))
    items: list[dict[str, Any]] = []
    for index in range(count):
        kind = draw(st.sampled_from(["choice", "choice", "multi_choice"]))
        item: dict[str, Any] = {
            "id": f"i{index}", "question": f"Question {index}?", "header": f"Q{index}",
            "type": kind, "options": [{"label": label} for label in LABELS],
            "required": index % 3 != 0 or draw(st.booleans()),
        }  # fmt: skip
        if draw(st.integers(0, 4)) == 0:
            default = draw(st.sampled_from(LABELS))
            item["default"] = [default] if kind == "multi_choice" else default
        parents = (
            draw(st.lists(st.integers(0, index - 1), unique=True, max_size=2)) if index else []
        )
        if parents:
            item["ask_when"] = {
                f"i{parent}": draw(st.lists(st.sampled_from(LABELS), min_size=1, max_size=2,
                                            unique=True))
                for parent in parents
            }  # fmt: skip
        items.append(item)
    return task_of(*draw(st.permutations(items)))


@given(task=condition_graphs(), per_turn=st.sampled_from([1, 2]), data=st.data())
def test_no_question_is_asked_before_its_conditions_are_decided_nor_when_they_fail(
    task: Task, per_turn: int, data: st.DataObject
) -> None:
    """A person answers whatever each turn asks (any label); at every turn each question's
    conditions are decided and hold, and no input that does not apply is asked or missing."""
    by_id = {item.id: item for item in task.inputs}
    with tempfile.TemporaryDirectory() as folder:
        turns: list[dict[str, Any]] = []
        for _ in range(4):
            plan = plan_task(task, folder, responses=turns, questions_per_turn=per_turn)
            known: dict[str, Any] = {key: entry.value for key, entry in plan.inferred.items()}
            known |= plan.responses
            decided = applicability(task.inputs, known)
            assert len(plan.questions) <= per_turn
            if plan.questions:  # what Claude Code is offered: the askable questions only
                assert plan.ask_user_question == to_ask_user_question(plan.questions)
            for question in plan.questions:
                for name in by_id[question.input].ask_when:
                    assert name in known, f"{question.id} asked before {name} had a value"
                assert question.input in decided.applies
            assert not set(plan.missing_info) & set(plan.not_applicable)
            assert set(plan.not_applicable) == decided.not_applicable
            if not plan.questions:
                break
            turns.append({
                q.id: data.draw(st.sampled_from(LABELS) if q.type == "choice"
                                else st.lists(st.sampled_from(LABELS), min_size=1, unique=True))
                for q in plan.questions
            })  # fmt: skip
        assert plan.status in ("ready", "invalid")
        if plan.status == "invalid":
            # Only turns running out leave inputs unanswered, and only inputs that apply.
            with pytest.raises(InputsInvalidError) as refused:
                resolve_inputs(task, folder, plan)
            assert {e.field for e in refused.value.errors} <= decided.applies | decided.waiting
            return
        values = resolve_inputs(task, folder, plan)
        for ident in decided.not_applicable:
            assert values.provenance[ident] == NOT_APPLICABLE_SOURCE
            assert values.as_text()[ident] == ""


def test_a_later_answer_that_makes_an_input_apply_brings_its_default_back(tmp_path: Path) -> None:
    """Planned for Database, hosting's default is kept in inferred but unused; executed with
    Infra instead, hosting applies and takes its default."""
    task = task_of(CATEGORY, DB, {**HOSTING, "default": "Fly.io"}, TEAM)
    plan = plan_task(task, tmp_path, responses={"category": "Database"})
    assert plan.not_applicable == ("hosting",) and plan.inferred["hosting"].value == "Fly.io"

    values = resolve_inputs(task, tmp_path, plan, {"category": "Infra", "team": "core"})

    assert values.provenance == {"category": "response", "db": "not_applicable",
                                 "hosting": "default", "team": "response"}  # fmt: skip
