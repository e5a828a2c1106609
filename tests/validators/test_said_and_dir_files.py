"""The ``said`` and ``dir_files`` exit checks, judged from in-memory evidence."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError
from tests.helpers.exit_evidence import FakeEvidence

from phasegate.phases.checks import Check, DirFiles, Said, check_as_file
from phasegate.validators.stage_checks import evaluate

CHECK = TypeAdapter[Check](Check)
CREATE_SRC = "create the directory src holding at least 2 files"


def test_said_holds_when_the_agent_says_the_promise_in_prose() -> None:
    """Its own text, on a line of its own, outside code, whitespace-normalised."""
    outcome = evaluate(Said(text="DONE"), FakeEvidence(texts=["Done.\n<promise> DONE </promise>"]))
    assert outcome.ok
    assert outcome.detail == "you said <promise>DONE</promise>"


def test_said_fails_when_the_promise_is_only_in_code_and_says_how_to_fix_it() -> None:
    """A promise in a code block is quoted: the feedback says so, and what would count."""
    evidence = FakeEvidence(texts=["I will print:\n```\n<promise>DONE</promise>\n```"])
    outcome = evaluate(Said(text="DONE"), evidence)
    assert not outcome.ok
    assert outcome.detail == "<promise>DONE</promise> appears in your replies only inside code"
    assert "say <promise>DONE</promise> on a line of its own in your own reply" in outcome.remedy
    assert "a file or a tool call, does not count" in outcome.remedy


def test_said_fails_when_the_promise_is_only_mentioned_in_a_sentence() -> None:
    """Saying "I cannot output it yet" is the opposite: the feedback asks for its own line."""
    evidence = FakeEvidence(texts=["Tests fail, so I cannot output <promise>DONE</promise> yet."])
    outcome = evaluate(Said(text="DONE"), evidence)
    assert not outcome.ok
    assert outcome.detail == (
        "<promise>DONE</promise> appears in your replies only inside a sentence or a quote, "
        "not on a line of its own"
    )
    assert "mentioning it in a sentence" in outcome.remedy


def test_said_fails_when_the_promise_is_only_quoted() -> None:
    """A block quote of the instruction is not the agent saying it."""
    evidence = FakeEvidence(texts=["You said:\n\n> <promise>DONE</promise>"])
    assert not evaluate(Said(text="DONE"), evidence).ok


def test_said_fails_naming_the_other_promise_the_agent_made() -> None:
    """Another promise is not this one."""
    outcome = evaluate(Said(text="DONE"), FakeEvidence(texts=["<promise>ALMOST</promise>"]))
    assert (outcome.ok, outcome.detail) == (
        False,
        "you said <promise>ALMOST</promise>, not <promise>DONE</promise>",
    )


def test_a_said_promise_differing_only_by_an_invisible_character_is_shown_escaped() -> None:
    """``DONE`` and ``DONE\u200b`` look the same: the feedback shows which one was said."""
    outcome = evaluate(Said(text="DONE"), FakeEvidence(texts=["<promise>DO\u200bNE</promise>"]))
    assert (outcome.ok, outcome.detail) == (
        False,
        "you said <promise>DO\\u200bNE</promise> (invisible characters escaped: U+200B "
        "(ZERO WIDTH SPACE)), not <promise>DONE</promise>; leave the invisible characters out",
    )


def test_said_fails_when_nothing_was_said() -> None:
    """No text at all in the stage (only tool calls): not said."""
    outcome = evaluate(Said(text="DONE"), FakeEvidence())
    assert outcome.detail == "you did not say <promise>DONE</promise> in this stage"
    assert (
        outcome.description
        == "you say <promise>DONE</promise> yourself in this stage, on a line of its own, "
        "outside code"
    )


def test_a_said_check_normalises_its_text_and_refuses_an_empty_or_tagged_one() -> None:
    """The file form ``said: TEXT``; the tags belong to the agent's reply, not the check."""
    assert CHECK.validate_python({"said": "  ALL   DONE "}) == Said(text="ALL DONE")
    for bad in ("  ", "<promise>DONE</promise>"):
        with pytest.raises(ValidationError):
            CHECK.validate_python({"said": bad})


def test_dir_files_holds_with_enough_files_counted_recursively() -> None:
    """Files in subdirectories count."""
    files = {"src/a.py": "", "src/pkg/b.py": "", "src/pkg/deep/c.py": "", "other.py": ""}
    outcome = evaluate(DirFiles(path="src", min=3), FakeEvidence(files=files, directories={"src"}))
    assert outcome.ok
    assert outcome.detail == "src holds 3 files: src/a.py, src/pkg/b.py, src/pkg/deep/c.py"
    assert outcome.description == "src holds at least 3 files (subdirectories count)"


def test_dir_files_fails_short_saying_how_many_more_files_it_needs() -> None:
    """The remedy counts what is missing."""
    evidence = FakeEvidence(files={"src/a.py": ""}, directories={"src"})
    outcome = evaluate(DirFiles(path="src", min=3), evidence)
    assert (outcome.ok, outcome.detail, outcome.remedy) == (
        False,
        "src holds 1 file: src/a.py",
        "it needs at least 3: add 2 more files",
    )


@pytest.mark.parametrize(
    ("evidence", "detail", "remedy"),
    [
        (FakeEvidence(), "src does not exist", CREATE_SRC),
        (FakeEvidence(files={"src": ""}), "src is a file", CREATE_SRC),
        (
            FakeEvidence(outside={"src"}),
            "src resolves to /elsewhere, outside the work directory",
            "make it a directory inside the work directory",
        ),
    ],
    ids=["missing", "a-file", "outside"],
)
def test_dir_files_fails_on_a_missing_file_or_outside_directory(
    evidence: FakeEvidence, detail: str, remedy: str
) -> None:
    """Each says what was found and what to do."""
    outcome = evaluate(DirFiles(path="src", min=2), evidence)
    assert (outcome.ok, outcome.detail, outcome.remedy) == (False, detail, remedy)


def test_dir_files_with_min_zero_asks_only_that_the_directory_exists() -> None:
    """An empty directory holds for ``min: 0``."""
    outcome = evaluate(DirFiles(path="out", min=0), FakeEvidence(directories={"out"}))
    assert outcome.ok
    assert outcome.description == "the directory out exists"


def test_a_dir_files_path_may_not_leave_the_work_directory() -> None:
    """Refused at load, like every other check's path."""
    with pytest.raises(ValidationError, match="leaves the work directory"):
        CHECK.validate_python({"dir_files": {"path": "../src", "min": 1}})


def test_checks_written_back_in_file_form_load_as_the_same_checks() -> None:
    """The short form when one setting says it all, the mapping otherwise."""
    checks = [
        {"said": "DONE"},
        {"dir_files": "src"},
        {"dir_files": {"path": "src", "min": 3}},
        {"min_lines": {"path": "a.md", "n": 5}},
        {"command": {"argv": ["make", "test"], "timeout": 30.0}},
    ]
    for data in checks:
        check = CHECK.validate_python(data)
        assert check_as_file(check) == data
        assert CHECK.validate_python(check_as_file(check)) == check


@pytest.mark.parametrize("char", ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"])
def test_a_said_check_refuses_a_promise_holding_an_invisible_character_by_code_point(
    char: str,
) -> None:
    """No agent could be expected to say it: a loop waiting for it would never end."""
    with pytest.raises(ValidationError, match=f"U\\+{ord(char):04X} "):
        CHECK.validate_python({"said": f"ALL{char} DONE"})
