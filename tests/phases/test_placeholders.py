"""Finding and filling {{ id }} placeholders: text only, one pass, never evaluated."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.helpers.fuzz import bounded_memory, hostile_text

from phasegate.errors import InputsInvalidError, PhasegateError
from phasegate.phases.inputs import TaskInput
from phasegate.phases.placeholders import placeholders_in, substitute, text_values


def an_input(name: str, **extra: object) -> TaskInput:
    """A text input called ``name``."""
    return TaskInput.model_validate({"id": name, "question": f"{name}?", "header": "H", **extra})


def test_placeholders_are_found_with_or_without_spaces() -> None:
    """`{{a}}`, `{{ a }}` and tabs all name the input; repeats are kept in order."""
    assert placeholders_in("{{a}} {{ b }} {{\tc\t}} {{ a }}") == ["a", "b", "c", "a"]


def test_a_substituted_value_is_not_scanned_again() -> None:
    """A value holding `{{ b }}` stays literal, even when b has a value."""
    assert substitute("{{ a }}/{{ b }}", {"a": "{{ b }}", "b": "x"}) == "{{ b }}/x"


def test_values_are_text_never_evaluated_or_escaped() -> None:
    """Backslashes and regex group references in a value arrive unchanged."""
    value = r"\1 \g<0> $HOME `rm -rf /` {0}"
    assert substitute("run {{ a }}", {"a": value}) == f"run {value}"


def test_defaults_fill_missing_values_and_optional_inputs_become_empty() -> None:
    """Given values win; a default fills the rest; an optional input without one is ''."""
    inputs = [an_input("a"), an_input("b", default="B"), an_input("c", required=False)]
    assert text_values(inputs, {"a": "A"}) == {"a": "A", "b": "B", "c": ""}


def test_a_required_input_without_value_or_default_is_refused_with_every_problem() -> None:
    """The error lists each problem: the missing input, a TBD value, an unknown id."""
    inputs = [an_input("a"), an_input("b")]

    with pytest.raises(InputsInvalidError) as caught:
        text_values(inputs, {"b": "TBD", "zz": "1"})

    fields = sorted(problem.field for problem in caught.value.errors)
    assert fields == ["a", "b", "zz"]
    assert caught.value.exit_code == 2


@pytest.mark.fuzz
@given(text=hostile_text, value=hostile_text)
def test_finding_and_filling_placeholders_never_fails_on_any_text(text: str, value: str) -> None:
    """Any text and any value: no exception, memory bounded, nothing changes without values,
    and every placeholder found becomes one copy of the value."""
    with bounded_memory():
        names = placeholders_in(text)
        filled = substitute(text, dict.fromkeys(names, value))
        unchanged = substitute(text, {})
    assert unchanged == text
    if value and names:
        assert filled.count(value) >= len(names)


@pytest.mark.fuzz
@given(given_values=st.dictionaries(hostile_text, st.one_of(hostile_text, st.integers())))
def test_checking_values_raises_only_phasegate_errors(given_values: dict[str, object]) -> None:
    """Whatever a caller passes, only phasegate's errors escape."""
    with bounded_memory(), contextlib.suppress(PhasegateError):
        text_values([an_input("a")], given_values)  # type: ignore[arg-type]  # hostile
