"""The clarification rules applied to questions written by someone else, and the
AskUserQuestion conversion both ways."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from phasegate.errors import PhasegateError
from phasegate.phases.inputs import OTHER_LABEL, TaskInput
from phasegate.planning.answers import check_answer
from phasegate.planning.ask_user_question import normalize_responses, to_ask_user_question
from phasegate.planning.clarification import check_proposal
from phasegate.planning.questions import follow_up_for, question_for
from tests.helpers.fuzz import bounded_memory, hostile_text
from tests.helpers.inputs import ci_task

INPUTS = ci_task().inputs
BY_ID = {item.id: item for item in INPUTS}
INFERRED = {
    "ci": {"value": "GitHub Actions", "source": "file_exists: .github/workflows/ci.yml"},
    "language": {"value": "Python", "source": "pyproject.toml"},
    "project": {"value": "demo", "source": "pyproject.toml project.name"},
    "tools": {"value": ["pytest"], "source": "pyproject.toml [tool.pytest]"},
}


def test_a_proposal_that_follows_the_rules_gets_no_feedback() -> None:
    """Inferred values with sources, and the first missing input asked."""
    assert check_proposal(INPUTS, {"inferred": INFERRED, "questions": [{"id": "target"}]}) == []


def test_four_questions_in_one_turn_get_feedback() -> None:
    """The budget: at most questions_per_turn (here 1) questions."""
    questions = [{"id": name} for name in ("ci", "language", "target", "team")]
    feedback = check_proposal(INPUTS, {"inferred": {}, "questions": questions})
    assert any("at most 1 question" in sentence for sentence in feedback)


def test_a_tbd_default_and_a_tbd_inferred_value_get_feedback() -> None:
    """Placeholders are refused wherever they appear."""
    inferred = {**INFERRED, "project": {"value": "TBD", "source": "guess"}}
    feedback = check_proposal(
        INPUTS, {"inferred": inferred, "questions": [{"id": "project", "default": "TBD"}]}
    )
    assert any(
        "Inferred 'project'" in sentence and "placeholder" in sentence for sentence in feedback
    )
    assert any("default of 'project'" in sentence for sentence in feedback)


def test_asking_an_inferred_input_or_out_of_order_gets_feedback() -> None:
    """Only missing inputs, first ones first."""
    inferred_and_asked = check_proposal(INPUTS, {"inferred": INFERRED, "questions": [{"id": "ci"}]})
    assert any("you inferred it" in sentence for sentence in inferred_and_asked)
    out_of_order = check_proposal(INPUTS, {"inferred": INFERRED, "questions": [{"id": "team"}]})
    assert any("declared order: target" in sentence for sentence in out_of_order)


def test_answers_so_far_move_the_expected_questions_on() -> None:
    """With target answered "Other (specify)", its follow-up target__other comes first;
    with target answered, team."""
    proposal = {"inferred": INFERRED, "questions": [{"id": "target__other"}]}
    assert check_proposal(INPUTS, proposal, responses={"target": OTHER_LABEL}) == []
    proposal = {"inferred": INFERRED, "questions": [{"id": "team"}]}
    assert check_proposal(INPUTS, proposal, responses={"target": "AWS"}) == []


def test_options_without_other_last_get_feedback() -> None:
    """A single choice's options are its own, then "Other (specify)"."""
    question = {"id": "target", "options": [{"label": "AWS"}, {"label": "Fly.io"}]}
    feedback = check_proposal(INPUTS, {"inferred": INFERRED, "questions": [question]})
    assert any("'Other (specify)' last" in sentence for sentence in feedback)


def test_an_inferred_value_without_a_source_gets_feedback() -> None:
    """Every inferred value keeps its source."""
    feedback = check_proposal(INPUTS, {"inferred": {"ci": "GitHub Actions"}, "questions": []})
    assert any("needs its source" in sentence for sentence in feedback)


@pytest.mark.parametrize("name", ["ci", "tools", "team", "target"])
def test_questions_convert_to_ask_user_question_with_two_to_four_options(name: str) -> None:
    """question, header (≤ 12), 2 to 4 options with label and description, multiSelect."""
    converted = to_ask_user_question([question_for(BY_ID[name])])
    (question,) = converted["questions"]
    assert set(question) == {"question", "header", "options", "multiSelect"}
    assert len(question["header"]) <= 12
    assert 2 <= len(question["options"]) <= 4
    assert all(set(option) == {"label", "description"} for option in question["options"])
    assert question["multiSelect"] is (name == "tools")


def test_the_follow_up_question_converts_too_and_its_answer_maps_back() -> None:
    """The "Other" follow-up's text maps back to target__other."""
    follow_up = follow_up_for(BY_ID["target"])
    converted = to_ask_user_question([follow_up])
    text = converted["questions"][0]["question"]
    responses, problems = normalize_responses(INPUTS, {"answers": {text: "Render"}})
    assert (responses, problems) == ({"target__other": "Render"}, [])


def test_tool_answers_map_back_to_ids_with_labels_joined_by_commas() -> None:
    """Multi-select answers come joined by commas; unknown question texts are problems."""
    answer = {
        "answers": {
            "Which tools should CI run?": "pytest, mypy",
            "Where should it deploy?": "AWS",
            "What is your name?": "x",
        }
    }
    responses, problems = normalize_responses(INPUTS, answer)
    assert responses == {"tools": "pytest, mypy", "target": "AWS"}
    assert [problem.field for problem in problems] == ["What is your name?"]
    assert check_answer(BY_ID["tools"], responses) == (("pytest", "mypy"), [])


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("target", "aws", "AWS"),
        ("target", "Render", "Render"),
        ("tools", ["Ruff", "pytest"], ("pytest", "Ruff")),
        ("team", "  core  ", "core"),
    ],
)
def test_accepted_answers_take_the_canonical_label_or_the_concrete_text(
    name: str, value: Any, expected: Any
) -> None:
    """Labels match whatever their case; own text on a single choice is the value."""
    assert check_answer(BY_ID[name], {name: value}) == (expected, [])


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("tools", "pytest, cobol"),
        ("tools", []),
        ("target", 3),
        ("team", "<name>"),
        ("team", OTHER_LABEL),
    ],
)
def test_refused_answers_give_no_value_and_say_what_is_required(name: str, value: Any) -> None:
    """Not an option, nothing chosen, not text, a placeholder, the option's own label."""
    result, problems = check_answer(BY_ID[name], {name: value})
    assert result is None
    assert problems and problems[0].requirement


def test_other_with_a_placeholder_text_is_refused_on_the_other_field() -> None:
    """target__other = TBD is refused on target__other."""
    item = BY_ID["target"]
    result, problems = check_answer(item, {"target": OTHER_LABEL, "target__other": "TBD"})
    assert result is None
    assert problems[0].field == "target__other"


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), hostile_text),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(hostile_text, inner, max_size=4),
    max_leaves=12,
)


@pytest.mark.fuzz
@given(
    responses=st.dictionaries(st.one_of(st.sampled_from(list(BY_ID)), hostile_text), json_values)
)
def test_answer_checks_accept_any_responses_without_raising(responses: dict[str, Any]) -> None:
    """Whatever the responses hold, checking them raises nothing but phasegate's errors and
    never accepts a placeholder as a value."""
    with bounded_memory(), contextlib.suppress(PhasegateError):
        normalized, _ = normalize_responses(INPUTS, responses)
        for item in INPUTS:
            value, _ = check_answer(item, normalized)
            if isinstance(value, str):
                assert value.strip() and value.strip().upper() not in ("TBD", "TODO", "...")


@pytest.mark.fuzz
@given(proposal=json_values)
def test_check_proposal_accepts_any_json_without_raising(proposal: object) -> None:
    """A model may answer anything: the rules answer with sentences, never a traceback."""
    with bounded_memory():
        feedback = check_proposal(INPUTS, proposal)
    assert all(isinstance(sentence, str) for sentence in feedback)


def test_an_input_with_examples_offers_them_as_options() -> None:
    """A text input's options are examples, then "Other (specify)"."""
    item = TaskInput.model_validate(
        {"id": "n", "question": "Name?", "header": "Name", "options": [{"label": "demo"}]}
    )
    assert [o.label for o in question_for(item).options] == ["demo", OTHER_LABEL]


def test_a_huge_refused_answer_is_not_echoed_back_whole() -> None:
    """A problem repeats enough of a refused value to recognise it, not megabytes of it."""
    from phasegate.planning.answers import SHOWN_CHARS, shown_value

    assert shown_value("x" * 5_000_000) == "x" * SHOWN_CHARS + "…"
    assert shown_value("TBD") == "TBD" and shown_value(["a"]) == "['a']"
