"""One placeholder-value rule for task inputs, their answers and the output JSON
(phases.placeholder_values): a stand-in refused by one is refused by all three."""

from __future__ import annotations

from typing import Any

import pytest

from phasegate.errors import InputsInvalidError
from phasegate.phases.inputs import TaskInput
from phasegate.phases.model import Task
from phasegate.phases.placeholder_values import is_placeholder_value, placeholder_problem
from phasegate.phases.placeholders import text_values
from phasegate.planning.answers import check_answer
from phasegate.validators.issues import IssueCode
from phasegate.validators.output import check_placeholders

STAND_INS = [
    "TBD", "todo", "TBA", "FIXME", "N/A", "n/a", "NA", "XXX", "placeholder",
    "?", "???", "...", "…", "<your name>", "<path>", "TODO: decide later",
    "todo: fill in", "TBD later", "FIXME: pick one", "  TBD  ",
]  # fmt: skip
VALUES = [
    "Python", "0", "GitHub Actions", "a, b", "tbd-service", "TODO.md", "todo.py",
    "src/todo/views.py", "Todo list items are now escaped.", "a <b> tag", "Wait... it was eval.",
    "..", "NASA",
]  # fmt: skip
TEXT_INPUT = TaskInput(id="owner", question="Who owns the service?", header="Owner")


def _output_schema(task: Task) -> dict[str, Any]:
    assert task.output_phase is not None
    assert task.output_phase.output_schema is not None
    return task.output_phase.output_schema


@pytest.mark.parametrize("value", STAND_INS)
def test_a_stand_in_is_a_placeholder_value(value: str) -> None:
    """Each stand-in is recognized, and named as such when given as an answer."""
    assert is_placeholder_value(value)
    assert placeholder_problem(value) == f"{value.strip()!r} is a placeholder, not a value"


@pytest.mark.parametrize("value", VALUES)
def test_real_values_and_file_names_are_not_placeholder_values(value: str) -> None:
    """Short, odd or todo-looking values and file names are values."""
    assert not is_placeholder_value(value)
    assert placeholder_problem(value) is None


def test_empty_text_is_a_problem_but_not_a_placeholder_value() -> None:
    """Whether a value may be empty is the caller's rule; as an answer it is empty."""
    assert not is_placeholder_value("  ")
    assert placeholder_problem("  ") == "is empty"


@pytest.mark.parametrize("value", ["N/A", "TODO: decide later", "???", "<name>", "TBD"])
def test_inputs_answers_and_the_output_json_refuse_the_same_stand_ins(
    fix_task: Task, value: str
) -> None:
    """The three places a value is filled in agree: a given input value, a clarification
    answer and a string in the output JSON (N/A used to pass the gate, TODO: … an input)."""
    with pytest.raises(InputsInvalidError):
        text_values([TEXT_INPUT], {"owner": value})
    answered, problems = check_answer(TEXT_INPUT, {"owner": value})
    assert answered is None
    assert [problem.field for problem in problems] == ["owner"]
    schema = _output_schema(fix_task)
    issues = check_placeholders(2, {"files_changed": ["app.py"], "description": value}, schema)
    assert [issue.code for issue in issues] == [IssueCode.PLACEHOLDER_VALUE]


@pytest.mark.parametrize("value", ["Platform team", "TODO.md", "NASA"])
def test_inputs_answers_and_the_output_json_accept_the_same_values(
    fix_task: Task, value: str
) -> None:
    """A value one of them accepts, all of them accept."""
    assert text_values([TEXT_INPUT], {"owner": value}) == {"owner": value}
    assert check_answer(TEXT_INPUT, {"owner": value}) == (value, [])
    schema = _output_schema(fix_task)
    assert check_placeholders(2, {"files_changed": ["app.py"], "description": value}, schema) == []


@pytest.mark.parametrize("value", ["not sure", "I don't know", "I dont know"])
def test_a_non_answer_is_refused_as_an_answer_but_is_text_in_the_output_json(
    fix_task: Task, value: str
) -> None:
    """Saying one does not know gives no value; the same words are a fine option label in a
    clarify proposal (phasegate offers "I don't know" itself)."""
    assert placeholder_problem(value) == f"{value!r} is a placeholder, not a value"
    answered, _ = check_answer(TEXT_INPUT, {"owner": value})
    assert answered is None
    assert not is_placeholder_value(value)
    schema = _output_schema(fix_task)
    assert check_placeholders(2, {"files_changed": ["app.py"], "description": value}, schema) == []
