"""The marker grammar on one block of assistant text (phasegate.phases.markers).

Which entries are searched, and which numbers belong to a task, is the windows' business:
see tests/validators/test_windows.py.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from phasegate.phases.markers import MarkerMatch, find_markers, marker_line


def test_a_marker_on_its_own_line_is_found_with_its_number_text_and_line() -> None:
    """A plain marker line yields its phase number, its text and its line in the block."""
    text = "I fixed app.py.\nPHASE 1 COMPLETE: Files have been edited\nNow the summary."

    assert find_markers(text) == [MarkerMatch(index=1, text="Files have been edited", line=1)]


def test_marker_line_builds_a_line_the_grammar_reads_back() -> None:
    """The line the prompt asks for is exactly the line the grammar accepts."""
    line = marker_line(3, "Tests pass")

    assert line == "PHASE 3 COMPLETE: Tests pass"
    assert find_markers(line) == [MarkerMatch(index=3, text="Tests pass", line=0)]


@pytest.mark.parametrize(
    "line",
    [
        "I will print PHASE 1 COMPLETE: done when I am finished.",
        "Next: PHASE 1 COMPLETE: done",
        "> PHASE 1 COMPLETE: done",
        "- PHASE 1 COMPLETE: done",
        "`PHASE 1 COMPLETE: done`",
    ],
)
def test_a_marker_mid_sentence_or_quoted_does_not_count(line: str) -> None:
    """Anything but whitespace, a heading or bold before the marker makes it not count."""
    assert find_markers(line) == []


@pytest.mark.parametrize(
    "block",
    [
        "```\nPHASE 1 COMPLETE: done\n```",
        "```text\nPHASE 1 COMPLETE: done\n```",
        "~~~\nPHASE 1 COMPLETE: done\n~~~",
        "Print this when done:\n  ```\n  PHASE 1 COMPLETE: done\n  ```\nOK.",
    ],
)
def test_a_marker_inside_a_fenced_code_block_does_not_count(block: str) -> None:
    """A marker quoted in a code fence is shown, not said."""
    assert find_markers(block) == []


def test_a_marker_after_a_closed_fence_counts() -> None:
    """Closing the fence ends the quotation: the next marker line counts."""
    text = "```python\nx = 1\n```\nPHASE 1 COMPLETE: done"

    assert [m.index for m in find_markers(text)] == [1]


def test_a_fence_is_closed_only_by_the_same_kind_of_fence() -> None:
    """Backticks inside a tilde fence do not close it, so the marker stays quoted."""
    text = "~~~\n```\nPHASE 1 COMPLETE: done\n~~~"

    assert find_markers(text) == []


def test_an_unclosed_fence_quotes_everything_after_it() -> None:
    """A fence never closed keeps the rest of the block quoted."""
    assert find_markers("```\nPHASE 1 COMPLETE: done") == []


@pytest.mark.parametrize(
    "line",
    [
        "phase 1 complete: done",
        "Phase 1 Complete: done",
        "PHASE 1 complete: done",
        "phase 1 COMPLETE: done",
    ],
)
def test_a_marker_not_in_upper_case_does_not_count(line: str) -> None:
    """PHASE and COMPLETE must be upper case."""
    assert find_markers(line) == []


@pytest.mark.parametrize(
    "line",
    [
        "PHASE 1 COMPLETE done",
        "PHASE one COMPLETE: done",
        "PHASE 1 COMPLETED: done",
        "PHASE1 COMPLETE: done",
        "PHASE 12345 COMPLETE: done",
    ],
)
def test_a_malformed_marker_does_not_count(line: str) -> None:
    """A missing colon, a spelled-out or over-long number, or a changed word is not a marker."""
    assert find_markers(line) == []


@pytest.mark.parametrize(
    "line",
    [
        "**PHASE 1 COMPLETE: done**",
        "__PHASE 1 COMPLETE: done__",
        "## PHASE 1 COMPLETE: done",
        "###### PHASE 1 COMPLETE: done",
        "### **PHASE 1 COMPLETE: done**",
        "   PHASE 1 COMPLETE: done",
        "\tPHASE 1 COMPLETE: done   ",
        "**PHASE 1 COMPLETE:** done",
    ],
)
def test_markdown_decoration_around_a_marker_is_tolerated_and_stripped(line: str) -> None:
    """Headings, bold and indentation still count, and the recorded text loses the decoration."""
    assert find_markers(line) == [MarkerMatch(index=1, text="done", line=0)]


def test_a_marker_with_nothing_after_the_colon_still_names_its_phase() -> None:
    """The text after the colon is recorded, not compared: an empty one still counts."""
    assert find_markers("PHASE 2 COMPLETE:") == [MarkerMatch(index=2, text="", line=0)]


def test_paraphrased_marker_text_is_recorded_as_written() -> None:
    """The model's own words after the colon are kept verbatim."""
    (match,) = find_markers("PHASE 1 COMPLETE: I edited app.py to use ast.literal_eval")

    assert match.text == "I edited app.py to use ast.literal_eval"


@pytest.mark.parametrize("number", [0, 7, 9999])
def test_the_grammar_reads_any_number_and_leaves_its_meaning_to_the_task(number: int) -> None:
    """0 or a number past the last phase is still read; the windows decide it completes nothing."""
    assert [m.index for m in find_markers(f"PHASE {number} COMPLETE: done")] == [number]


def test_two_markers_in_one_text_block_are_both_found_in_order() -> None:
    """Each marker line of a block is reported, with its own line number."""
    text = "PHASE 1 COMPLETE: edited\n\nPHASE 2 COMPLETE: verified"

    assert find_markers(text) == [
        MarkerMatch(index=1, text="edited", line=0),
        MarkerMatch(index=2, text="verified", line=2),
    ]


def test_a_repeated_marker_is_reported_each_time() -> None:
    """The grammar reports every occurrence; which one counts is decided per phase window."""
    text = "PHASE 1 COMPLETE: done\nwait, one more fix\nPHASE 1 COMPLETE: done"

    assert [(m.index, m.line) for m in find_markers(text)] == [(1, 0), (1, 2)]


def test_text_without_a_marker_gives_an_empty_list() -> None:
    """Ordinary prose yields nothing."""
    assert find_markers("I looked at app.py; the eval call is the problem.") == []
    assert find_markers("") == []


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_find_markers_never_raises_on_arbitrary_text(text: str) -> None:
    """Any string is valid input, and every reported line exists in the block."""
    found = find_markers(text)

    lines = text.splitlines()
    assert all(0 <= match.line < len(lines) for match in found)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text()))
def test_find_markers_never_raises_on_arbitrary_lines(lines: list[str]) -> None:
    """Blocks assembled from arbitrary lines are read without error."""
    assert isinstance(find_markers("\n".join(lines)), list)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(min_value=0, max_value=9999),
    st.text(alphabet=st.characters(categories=["L", "N"]) | st.just(" "), max_size=40),
)
def test_every_marker_line_is_read_back_as_its_own_number_and_text(index: int, text: str) -> None:
    """marker_line and find_markers agree for any number and any plain one-line text."""
    assert find_markers(marker_line(index, text)) == [
        MarkerMatch(index=index, text=text.strip(), line=0)
    ]
