"""Completion promises (phasegate.phases.promises): what counts as the agent saying one."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.helpers.fuzz import bounded_memory, hostile_text

from phasegate.phases.promises import mentioned_promises, said_promises, tagged


def test_a_promise_on_a_line_of_its_own_is_said_whitespace_normalised() -> None:
    """Leading, trailing and inner runs of whitespace do not matter, as in Ralph's hook."""
    assert said_promises("All green.\n<promise>  ALL \t TESTS   PASS </promise>") == [
        "ALL TESTS PASS"
    ]


def test_every_promise_on_a_line_of_its_own_is_found_in_order() -> None:
    """Two promises, each on its line, are both said."""
    assert said_promises("<promise>A</promise>\nthen\n<promise>B</promise>\n") == ["A", "B"]


@pytest.mark.parametrize(
    "text",
    [
        "   <promise>DONE</promise>",
        "## <promise>DONE</promise>",
        "**<promise>DONE</promise>**  ",
        "Tests pass.\n__<promise>DONE</promise>__\nBye.",
    ],
    ids=["three-spaces", "heading", "bold", "bold-underscores"],
)
def test_a_promise_with_the_decoration_markers_allow_is_said(text: str) -> None:
    """Up to three spaces, a heading, bold: models decorate, as with phase markers."""
    assert said_promises(text) == ["DONE"]


@pytest.mark.parametrize(
    "text",
    [
        "The tests still fail, so I cannot output <promise>DONE</promise> yet.",
        "I'll output <promise>DONE</promise>\nonce the tests pass.",
        "Done: <promise>DONE</promise>",
        "<promise>DONE</promise> is what I will say later.",
        "> <promise>DONE</promise>",
        "You asked:\n> Output <promise>DONE</promise> only when it is true.",
        "- <promise>DONE</promise>",
        "<promise>DONE</promise> <promise>DONE</promise>",
        "<promise>DO\nNE</promise>",
    ],
    ids=[
        "negated",
        "future",
        "after-text",
        "before-text",
        "block-quote",
        "quoted-instruction",
        "list-item",
        "two-on-a-line",
        "over-lines",
    ],
)
def test_a_promise_mentioned_in_a_sentence_or_quoted_is_not_said(text: str) -> None:
    """Only a promise on a line of its own counts; a mention still stands in prose."""
    assert said_promises(text) == []
    assert mentioned_promises(text) != []


@pytest.mark.parametrize(
    "text",
    [
        "```\n<promise>DONE</promise>\n```",
        "~~~md\n<promise>DONE</promise>\n~~~",
        "Example:\n\n    <promise>DONE</promise>\n",
        "Print `<promise>DONE</promise>` when finished.",
        "<!-- <promise>DONE</promise> -->",
        "<!--\n<promise>DONE</promise>\n-->",
    ],
    ids=["fence", "tilde-fence", "indented", "code-span", "comment", "comment-block"],
)
def test_a_promise_inside_code_or_a_comment_is_not_said(text: str) -> None:
    """Quoted or hidden, not said; the tag search still sees it (for the feedback)."""
    assert said_promises(text) == []
    assert tagged(text) == ["DONE"]


def test_an_unclosed_or_case_changed_tag_promises_nothing() -> None:
    """Only ``<promise>…</promise>``, closed, in lower case."""
    assert said_promises("<promise>DONE") == []
    assert said_promises("<PROMISE>DONE</PROMISE>") == []


def test_a_promise_after_a_closed_fence_is_said() -> None:
    """Code ends where its fence closes."""
    assert said_promises("```\ncode\n```\n<promise>DONE</promise>") == ["DONE"]


@pytest.mark.fuzz
@given(st.one_of(hostile_text, st.text(alphabet="<>/promise`~ \n-!", max_size=400)))
def test_any_text_gives_a_list_of_promises_and_never_raises(text: str) -> None:
    """Linear, total: any string is valid input."""
    with bounded_memory():
        found = said_promises(text)
        quoted = tagged(text)
    assert all(isinstance(promise, str) for promise in found)
    assert len(found) <= len(quoted)
