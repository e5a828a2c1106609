"""Finding the JSON an agent printed (phasegate.validators.json_extract)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from phasegate.validators.json_extract import JsonCandidate, find_json

VALUE = {"files_changed": ["app.py"], "description": "Replaced eval with a parser."}


def test_a_fenced_json_block_is_a_candidate() -> None:
    """```json ... ``` after some prose parses to its object."""
    text = f"Here is the summary:\n\n```json\n{json.dumps(VALUE, indent=2)}\n```\n"

    assert find_json(text) == [JsonCandidate(json.dumps(VALUE, indent=2), value=VALUE)]


def test_a_whole_message_of_json_is_a_candidate() -> None:
    """A message that is just the object parses."""
    (candidate,) = find_json(json.dumps(VALUE))

    assert candidate.ok
    assert candidate.value == VALUE


def test_an_object_starting_a_line_after_prose_is_a_candidate() -> None:
    """Outside fences, a balanced object that starts a line is found, braces in strings too."""
    text = 'Summary below.\n  {"description": "use {} and \\"quotes\\"", "n": [1, {"x": 2}]}\nBye.'

    (candidate,) = find_json(text)

    assert candidate.value == {"description": 'use {} and "quotes"', "n": [1, {"x": 2}]}


def test_an_object_in_the_middle_of_a_sentence_is_not_a_candidate() -> None:
    """Inline braces in prose (e.g. a dict literal mentioned in passing) are not the answer."""
    assert find_json('I replaced eval with a dict lookup like {"a": 1} in app.py.') == []


def test_an_unlabelled_fence_counts_only_when_it_holds_an_object_or_array() -> None:
    """A plain fence with code is not JSON; one that starts with a brace is."""
    code = "```\ndef parse(x):\n    return {x: 1}\n```"
    data = '```\n{"a": 1}\n```'

    assert find_json(code) == []
    assert [c.value for c in find_json(data)] == [{"a": 1}]


def test_braces_inside_a_code_fence_of_another_language_are_ignored() -> None:
    """A Python dict at the start of a line inside ```python is code, not the answer."""
    assert find_json('```python\n{"a": 1}\n```') == []


def test_a_fenced_block_labelled_json_that_does_not_parse_is_an_invalid_candidate() -> None:
    """Broken JSON in a json fence is reported with the parser's reason and position."""
    (candidate,) = find_json('```json\n{"files_changed": ["app.py",]}\n```')

    assert not candidate.ok
    assert candidate.value is None
    assert candidate.error is not None
    assert "line 1" in candidate.error


def test_an_array_or_scalar_in_a_json_fence_is_not_an_object() -> None:
    """The answer must be an object; a list parses but is refused with the type found."""
    (candidate,) = find_json('```json\n["app.py"]\n```')

    assert candidate.error == "expected a JSON object, found list"


def test_an_unclosed_object_is_an_invalid_candidate() -> None:
    """An object cut off before its closing brace is reported, not dropped."""
    (candidate,) = find_json('{"files_changed": ["app.py"], "description": "cut')

    assert not candidate.ok


def test_several_candidates_come_back_in_order_of_appearance() -> None:
    """Fenced and bare candidates are merged in text order."""
    text = '{"n": 1}\n```json\n{"n": 2}\n```\nthen\n{"n": 3}'

    assert [c.value for c in find_json(text)] == [{"n": 1}, {"n": 2}, {"n": 3}]


def test_text_without_json_gives_no_candidates() -> None:
    """Prose alone yields nothing: no JSON is different from broken JSON."""
    assert find_json("I fixed app.py; nothing else changed.") == []
    assert find_json("") == []


def test_absurdly_deep_nesting_is_refused_without_recursion() -> None:
    """Nesting beyond the limit is an invalid candidate, not a crash."""
    (candidate,) = find_json("{" + '"a":[' * 1000 + "1" + "]" * 1000 + "}")

    assert candidate.error is not None
    assert "nested deeper than" in candidate.error


def test_deep_nesting_hidden_behind_brackets_in_strings_does_not_crash() -> None:
    """Closing brackets inside a string cannot trick the depth check into a RecursionError."""
    text = '{"s": "' + "]" * 10_000 + '", "x": ' + "[" * 3000 + "]" * 3000 + "}"

    (candidate,) = find_json(text)

    assert not candidate.ok


def test_an_integer_too_long_for_python_is_an_invalid_candidate() -> None:
    """Python's integer-size limit becomes an error on the candidate, not an exception."""
    (candidate,) = find_json('{"n": ' + "1" * 5000 + "}")

    assert not candidate.ok


# ---- property tests -------------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=8,
)
JSON_OBJECTS = st.dictionaries(st.text(max_size=10), JSON_VALUES, max_size=5)


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_find_json_never_raises_on_arbitrary_text(text: str) -> None:
    """Any string gives a list of candidates, each either parsed to an object or explained."""
    for candidate in find_json(text):
        assert candidate.ok == isinstance(candidate.value, dict)
        assert candidate.ok != isinstance(candidate.error, str)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text() | st.sampled_from(["```json", "```", "{", "}", '"', "~~~"])))
def test_find_json_never_raises_on_arbitrary_lines(lines: list[str]) -> None:
    """Lines mixing fences, braces and quotes never make it raise."""
    assert isinstance(find_json("\n".join(lines)), list)


@settings(max_examples=100, deadline=None)  # structured examples cost more to generate
@given(JSON_OBJECTS, st.booleans(), st.sampled_from(["", "Summary:\n", "PHASE 1 COMPLETE: x\n"]))
def test_any_printed_json_object_is_found_exactly(
    value: dict[str, Any], fenced: bool, prose: str
) -> None:
    """Whatever object the model prints, bare or fenced, after prose or not, comes back equal."""
    body = json.dumps(value, indent=2 if fenced else None)
    text = prose + (f"```json\n{body}\n```" if fenced else body)

    assert [c.value for c in find_json(text)] == [value]
