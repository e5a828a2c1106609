"""Relaying a question with more options than AskUserQuestion shows: groups on the first
step, a follow-up per group chosen, answers mapped back to the original labels; nothing lost,
"Other (specify)" on the first step, multi-select across groups."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from phasegate.errors import TaskFileError
from phasegate.phases.inputs import MAX_OPTIONS, OTHER_LABEL, TaskInput
from phasegate.phases.loading import task_from_mapping
from phasegate.planning.ask_user_question import (
    TOOL_OPTIONS,
    TOOL_QUESTIONS,
    next_ask_user_question,
    normalize_responses,
    relay_follow_ups,
    relayed_answers,
    to_ask_user_question,
)
from phasegate.planning.clarification import check_proposal
from phasegate.planning.questions import Question, question_for


def choice(count: int, *, multi: bool = False, ident: str = "pick") -> TaskInput:
    """A choice (or multi_choice) of ``count`` options named O1, O2, ..."""
    return TaskInput.model_validate({
        "id": ident, "question": f"Which {ident}?", "header": ident[:12],
        "type": "multi_choice" if multi else "choice",
        "options": [{"label": f"O{n}", "description": f"option {n}"} for n in range(1, count + 1)],
    })  # fmt: skip


def tool_questions(asked: dict[str, Any]) -> list[dict[str, Any]]:
    questions: list[dict[str, Any]] = asked["questions"]
    return questions


def fits_the_tool(asked: dict[str, Any]) -> bool:
    questions = tool_questions(asked)
    return 1 <= len(questions) <= TOOL_QUESTIONS and all(
        2 <= len(q["options"]) <= TOOL_OPTIONS and len(q["header"]) <= 12 for q in questions
    )


def person_picks(question: Question, wanted: list[str]) -> list[dict[str, Any]]:
    """The tool answers of a person who wants ``wanted`` (labels of ``question``): on the
    first step every group holding one of them (or the label itself), then each follow-up's
    labels. Every tool input on the way must fit the tool."""
    first = to_ask_user_question([question])
    assert fits_the_tool(first)
    options = [o["label"] for o in tool_questions(first)[0]["options"]]
    chosen = [label for label in options
              if any(w == label or w in label.split(" / ") for w in wanted)]  # fmt: skip
    step_one = {"answers": {question.question: ", ".join(chosen)}}
    answers = [step_one]
    for follow_up in relay_follow_ups([question], step_one):
        assert fits_the_tool(follow_up)
        answers.append({"answers": {
            q["question"]: ", ".join(o["label"] for o in q["options"] if o["label"] in wanted)
            for q in tool_questions(follow_up)
        }})  # fmt: skip
    return answers


@given(count=st.integers(1, MAX_OPTIONS), data=st.data())
def test_any_single_choice_option_and_other_come_back_exactly_through_the_relay(
    count: int, data: st.DataObject
) -> None:
    item = choice(count)
    question = question_for(item)
    wanted = data.draw(st.sampled_from([*item.labels, OTHER_LABEL]))

    answers = person_picks(question, [wanted])

    assert relayed_answers([question], *answers) == {"answers": {question.question: wanted}}
    merged = {"answers": {k: v for a in answers for k, v in a["answers"].items()}}
    assert normalize_responses([item], merged) == ({item.id: wanted}, [])


@given(count=st.integers(2, MAX_OPTIONS), data=st.data())
def test_any_set_of_multi_choice_options_across_groups_comes_back_in_declared_order(
    count: int, data: st.DataObject
) -> None:
    item = choice(count, multi=True)
    question = question_for(item)
    wanted = data.draw(st.lists(st.sampled_from(item.labels), min_size=1, unique=True))

    answers = person_picks(question, wanted)

    in_order = ", ".join(label for label in item.labels if label in wanted)
    assert relayed_answers([question], *answers) == {"answers": {question.question: in_order}}


@pytest.mark.parametrize("multi", [False, True])
@pytest.mark.parametrize("count", range(1, MAX_OPTIONS + 1))
def test_every_option_is_in_exactly_one_group_and_other_stays_last_on_the_first_step(
    count: int, multi: bool
) -> None:
    if multi and count < 2:
        return
    question = question_for(choice(count, multi=multi))
    first = tool_questions(to_ask_user_question([question]))[0]
    labels = [o["label"] for o in first["options"]]
    offered = [part for label in labels for part in label.split(" / ")]
    expected = [f"O{n}" for n in range(1, count + 1)] + ([] if multi else [OTHER_LABEL])
    assert offered == expected
    assert first["multiSelect"] is multi
    if len(question.options) <= TOOL_OPTIONS:
        assert labels == expected  # asked as it is, no groups


def test_the_seed_s_six_options_are_two_groups_and_other() -> None:
    item = TaskInput.model_validate({
        "id": "change_category", "question": "What type of change is this?",
        "header": "Category", "type": "choice",
        "options": [{"label": label} for label in
                    ("Frontend", "Backend", "Database", "Authentication", "Infra")],
    })  # fmt: skip
    asked = to_ask_user_question([question_for(item)])
    assert [o["label"] for o in tool_questions(asked)[0]["options"]] == [
        "Frontend / Backend / Database", "Authentication / Infra", OTHER_LABEL]  # fmt: skip


def test_two_questions_with_many_groups_chosen_get_follow_ups_four_at_most_per_call() -> None:
    one, two = (
        question_for(choice(12, multi=True, ident="a")),
        question_for(choice(12, multi=True, ident="b")),
    )
    groups = "O1 / O2 / O3 / O4, O5 / O6 / O7 / O8, O9 / O10 / O11 / O12"
    step_one = {"answers": {one.question: groups, two.question: groups}}

    calls = relay_follow_ups([one, two], step_one)

    assert [len(tool_questions(call)) for call in calls] == [4, 2]
    assert all(fits_the_tool(call) for call in calls)


def test_a_group_chosen_without_its_follow_up_makes_the_follow_up_the_next_ask() -> None:
    item = choice(6)
    question = question_for(item)
    step_one = {"answers": {question.question: "O4 / O5 / O6"}}

    assert normalize_responses([item], step_one) == ({}, [])  # not an answer yet, not refused
    follow_up = next_ask_user_question([question], step_one)
    assert [q["question"] for q in tool_questions(follow_up)] == ["Which pick? (O4 / O5 / O6)"]
    assert [o["label"] for o in tool_questions(follow_up)[0]["options"]] == ["O4", "O5", "O6"]
    assert next_ask_user_question([question], None) == to_ask_user_question([question])


def test_a_follow_up_answer_alone_is_the_answer_and_typed_text_on_it_is_kept() -> None:
    item = choice(6)
    assert normalize_responses([item], {"answers": {"Which pick? (O4 / O5 / O6)": "O5"}}) == (
        {"pick": "O5"}, [])  # fmt: skip
    typed = {"answers": {"Which pick?": "O4 / O5 / O6", "Which pick? (O4 / O5 / O6)": "Mine"}}
    assert normalize_responses([item], typed) == ({"pick": "Mine"}, [])


def test_a_group_label_given_by_id_is_refused_not_read_as_typed_text() -> None:
    responses, problems = normalize_responses([choice(6)], {"pick": "O1 / O2 / O3"})

    assert responses == {}
    (problem,) = problems
    assert problem.field == "pick" and "is the group 'O1 / O2 / O3'" in problem.problem
    assert problem.requirement == "choose one of 'O1', 'O2', 'O3'"


def test_choices_take_up_to_twelve_options_and_refuse_thirteen_with_what_to_do() -> None:
    def task(count: int, kind: str) -> Any:
        return task_from_mapping({
            "name": "t", "phases": [{"name": "p", "instructions": "Use {{ pick }}."}],
            "inputs": [{"id": "pick", "question": "Which?", "header": "Pick", "type": kind,
                        "options": [{"label": f"O{n}"} for n in range(count)]}],
        })  # fmt: skip

    assert len(task(12, "choice").inputs[0].options) == 12
    assert len(task(12, "multi_choice").inputs[0].options) == 12
    with pytest.raises(TaskFileError, match="a choice has 1 to 12 options"):
        task(13, "choice")
    with pytest.raises(TaskFileError, match="a multi_choice has 2 to 12 options"):
        task(13, "multi_choice")


def test_a_proposal_offering_all_options_of_a_large_choice_follows_the_rules() -> None:
    """The agent planner's proposals list every option, Other last; missing one is feedback."""
    item = choice(6)
    labels = [*item.labels, OTHER_LABEL]
    proposal = {"inferred": {}, "questions": [{"id": "pick", "options": labels}]}
    assert check_proposal([item], proposal) == []
    proposal["questions"] = [{"id": "pick", "options": labels[:4]}]
    (feedback,) = check_proposal([item], proposal)
    assert feedback.startswith("Offer 'pick' exactly these options ('Other (specify)' last)")


def test_a_choice_listing_other_last_as_the_seed_does_means_the_one_phasegate_adds() -> None:
    """Six options written as the seed lists them, "Other (specify)" last: the same input as
    five and the added Other; listed anywhere else it is refused."""
    five = [{"label": label} for label in ("Frontend", "Backend", "Database", "Authentication",
                                           "Infra")]  # fmt: skip
    base = {"id": "change_category", "question": "What type of change is this?",
            "header": "Category", "type": "choice"}  # fmt: skip
    listed = TaskInput.model_validate({**base, "options": [*five, {"label": OTHER_LABEL}]})
    assert listed == TaskInput.model_validate({**base, "options": five})
    assert [o.label for o in question_for(listed).options][-1] == OTHER_LABEL
    with pytest.raises(ValueError, match="is added to every single choice"):
        TaskInput.model_validate({**base, "options": [{"label": OTHER_LABEL}, *five]})
