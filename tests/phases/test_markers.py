"""The marker grammar on one block of assistant text (phasegate.phases.markers).

Which entries are searched, and which numbers belong to a task, is the windows' business:
see tests/validators/test_windows.py.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.helpers.fuzz import bounded_memory
from tests.helpers.scenarios import EDIT, EXAMPLE, GOOD_JSON, MARKER

from phasegate import Agent, Runner, load_task
from phasegate.phases.markers import MarkerMatch, find_markers, marker_line
from phasegate.testing import Script, ScriptedAgent
from phasegate.testing.pytest_plugin import ScriptedServerFactory


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
    "block",
    [
        "````markdown\n```\nPHASE 1 COMPLETE: done\n```\n````",
        "~~~~\n~~~\nPHASE 1 COMPLETE: done\n~~~~",
        "```\n```python\nPHASE 1 COMPLETE: done\n```",
        "```\n``` x\nPHASE 1 COMPLETE: done",
    ],
)
def test_a_fence_closes_only_on_a_bare_fence_of_its_character_at_least_as_long(
    block: str,
) -> None:
    """A shorter fence, or one with an info string, inside a fence is its content: the
    marker after it is still quoted."""
    assert find_markers(block) == []


def test_a_longer_fence_of_the_same_character_closes_the_block() -> None:
    """Five tildes close a three-tilde fence; the marker after them is said."""
    text = "~~~\nx\n~~~~~  \nPHASE 1 COMPLETE: done"

    assert [m.index for m in find_markers(text)] == [1]


@pytest.mark.parametrize(
    "block",
    [
        "``` not`a fence\nPHASE 1 COMPLETE: done",
        "    ```\nPHASE 1 COMPLETE: done",
        "``\nPHASE 1 COMPLETE: done",
    ],
)
def test_backticks_that_are_not_a_fence_do_not_quote_the_next_line(block: str) -> None:
    """A backtick info string with a backtick, four spaces of indentation or only two
    backticks open no fence, so the marker after them counts."""
    assert [m.index for m in find_markers(block)] == [1]


@pytest.mark.parametrize(
    "block",
    [
        "    PHASE 1 COMPLETE: done",
        "\tPHASE 1 COMPLETE: done",
        "  \tPHASE 1 COMPLETE: done",
        "I edited app.py.\n\n    PHASE 1 COMPLETE: done",
        "## Done\n    PHASE 1 COMPLETE: done",
        "I edited app.py.\n    PHASE 1 COMPLETE: done",
    ],
)
def test_a_marker_indented_by_four_columns_is_code_not_a_marker(block: str) -> None:
    """Four spaces or a tab make an indented code block (or continue a paragraph): neither
    starts a line a reader sees as the marker."""
    assert find_markers(block) == []


@pytest.mark.parametrize(
    "block",
    [
        "<!--\nPHASE 1 COMPLETE: done\n-->",
        "<!-- PHASE 1 COMPLETE: done -->",
        "Done.\n<!--\n\nPHASE 1 COMPLETE: done\n\n-->",
        "  <!-- draft:\nPHASE 1 COMPLETE: done -->\nmore",
        "I am done <!-- but\nPHASE 1 COMPLETE: done\n-->",
        "- <!--\n  PHASE 1 COMPLETE: done\n  -->",
    ],
)
def test_a_marker_inside_an_html_comment_does_not_count(block: str) -> None:
    """An HTML comment is not shown: a marker in it, on one line or many, is not said."""
    assert find_markers(block) == []


def test_a_marker_after_a_closed_html_comment_counts() -> None:
    """The comment ends at ``-->``; the line after it is prose again."""
    text = "<!-- a note\nthat ends here -->\nPHASE 1 COMPLETE: done"

    assert [m.index for m in find_markers(text)] == [1]


def test_an_unclosed_comment_opener_in_a_paragraph_is_plain_text() -> None:
    """``<!--`` never closed within its paragraph is literal text and hides nothing."""
    text = "Use <!-- for comments.\nPHASE 1 COMPLETE: done\n\nThe end."

    assert [m.index for m in find_markers(text)] == [1]


@pytest.mark.parametrize(
    "block",
    [
        "Print `\nPHASE 1 COMPLETE: done\n` when done.",
        "Print ``a ` b\nPHASE 1 COMPLETE: done``",
    ],
)
def test_a_marker_inside_a_code_span_over_several_lines_does_not_count(block: str) -> None:
    """A code span runs to the next backtick run of its length, across lines of its
    paragraph: a marker line inside it is quoted."""
    assert find_markers(block) == []


@pytest.mark.parametrize(
    "block",
    [
        "Print `\n\nPHASE 1 COMPLETE: done\n` later.",
        "An escaped \\`\nPHASE 1 COMPLETE: done\n` backtick",
        "`one` and `\nPHASE 1 COMPLETE: done",
    ],
)
def test_backticks_that_open_no_code_span_hide_nothing(block: str) -> None:
    """A blank line ends the paragraph (and any span), an escaped backtick opens nothing,
    and a run never closed is literal: the marker line counts."""
    assert [m.index for m in find_markers(block)] == [1]


@pytest.mark.parametrize(
    "block",
    [
        "- ```\n  PHASE 1 COMPLETE: done\n  ```",
        "1. ~~~\n\n   PHASE 1 COMPLETE: done",
        "> ```\n>\n> PHASE 1 COMPLETE: done",
    ],
)
def test_a_fence_opened_in_a_list_item_or_quote_quotes_its_content(block: str) -> None:
    """Fences inside containers are fences too."""
    assert find_markers(block) == []


def test_a_fence_in_a_list_item_ends_with_the_item() -> None:
    """A line outside the item's indentation ends the item and its fence."""
    assert [m.index for m in find_markers("- ```\nx\nPHASE 1 COMPLETE: done")] == [1]


@pytest.mark.parametrize("digit", ["１", "١", "१", "𝟏"])
def test_a_phase_number_in_non_ascii_digits_does_not_count(digit: str) -> None:
    """Only ASCII digits number a phase: fullwidth, Arabic-Indic or Devanagari ones do not."""
    assert find_markers(f"PHASE {digit} COMPLETE: done") == []


@pytest.mark.parametrize("separator", ["\u2028", "\x0b", "\x0c", "\x85", "\x1c"])
def test_only_markdown_line_endings_start_a_line(separator: str) -> None:
    """Unicode line and paragraph separators do not end a Markdown line: a marker after one
    is mid-line."""
    assert find_markers(f"Done.{separator}PHASE 1 COMPLETE: done") == []


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_each_markdown_line_ending_starts_a_line(newline: str) -> None:
    """``\\n``, ``\\r\\n`` and ``\\r`` all end a line; the marker's line number counts them."""
    text = f"Done.{newline}PHASE 1 COMPLETE: done{newline}"

    assert find_markers(text) == [MarkerMatch(index=1, text="done", line=1)]


@pytest.mark.parametrize("agent_kind", ["scripted", pytest.param("claude", marks=pytest.mark.cli)])
@pytest.mark.parametrize(
    "hidden",
    [
        f"I am done.\n\n    {MARKER}",
        f"````\n```\n{MARKER}\n```\n````",
        f"<!--\n{MARKER}\n-->",
        MARKER.replace("1", "１"),
    ],
)
def test_a_hidden_marker_does_not_complete_a_phase_in_a_scripted_run(
    hidden: str,
    agent_kind: str,
    tmp_path: Path,
    scripted_model_server: ScriptedServerFactory,
) -> None:
    """Through the runner, with the scripted agent and with the real CLI against the scripted
    model: after a real edit, a marker in indented code, inside a longer fence, in an HTML
    comment or with a fullwidth digit leaves the phase unclaimed (``marker_missing``)."""
    work = tmp_path / "project"
    shutil.copytree(EXAMPLE / "project", work)
    replies = [{"tools": [EDIT]}, {"text": f"{hidden}\n\n{GOOD_JSON}"}]
    script = Script.model_validate({"replies": replies})
    agent: Agent = ScriptedAgent(script)
    if agent_kind == "claude":
        agent = scripted_model_server(script).claude_agent(timeout=90, request_timeout=20)

    report = Runner(agent, mode="single-query").run_sync(load_task(EXAMPLE / "task.yaml"), work)

    assert report.verdict == "rejected"
    assert not report.phases[0].marker_seen
    assert "marker_missing" in {issue.code.value for issue in report.phases[0].issues}


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
        "PHASE 1 COMPLETE: done   \t",
        "**PHASE 1 COMPLETE:** done",
    ],
)
def test_markdown_decoration_around_a_marker_is_tolerated_and_stripped(line: str) -> None:
    """Headings, bold and up to three spaces still count; the recorded text loses them."""
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


_MARKDOWN_PIECES = st.sampled_from(
    ["PHASE 1 COMPLETE: done", "**PHASE 2 COMPLETE: x**", "## PHASE 3 COMPLETE: y", "text",
     "```", "````", "```py", "``` a`b", "~~~", "~~~~", "``", "`", "<!--", "-->", "<!-- c -->",
     "- ", "1. ", "> ", "    ", "  ", " ", "\t", "", "\\", "#", "---"]
)  # fmt: skip
_MARKDOWN = st.lists(st.lists(_MARKDOWN_PIECES, max_size=4).map("".join), max_size=12).map(
    "\n".join
)
"""Markdown built from the pieces that open and close code, comments and containers."""


def _code_or_html_lines(text: str) -> set[int]:
    """The lines CommonMark (markdown-it-py, as rich uses it) puts in code or HTML blocks."""
    from markdown_it import MarkdownIt

    hidden: set[int] = set()
    for token in MarkdownIt("commonmark").parse(text):
        if token.type in {"fence", "code_block", "html_block"} and token.map is not None:
            hidden.update(range(*token.map))
    return hidden


@pytest.mark.fuzz
@given(_MARKDOWN)
def test_no_marker_is_found_on_a_line_commonmark_puts_in_code_or_html(text: str) -> None:
    """Checked against a CommonMark parser: every marker found stands on a line the parser
    renders as prose, never inside fenced or indented code or an HTML block."""
    with bounded_memory():
        found = find_markers(text)

    assert not {match.line for match in found} & _code_or_html_lines(text)


@settings(max_examples=300, deadline=None)
@given(_MARKDOWN | st.text(max_size=200))
def test_skipping_text_without_a_marker_core_changes_no_answer(text: str) -> None:
    """find_markers reads the Markdown structure only of text holding ``PHASE n COMPLETE:``;
    reading every text in full finds the same markers."""
    found = find_markers(text)

    with mock.patch("phasegate.phases.markers._MARKER_ANYWHERE", re.compile("")):
        assert find_markers(text) == found
