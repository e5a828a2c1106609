"""Exit conditions written as sentences, read into structured checks
(phasegate.phases.sentences), and where a definition takes them."""

from __future__ import annotations

import re

import pytest

from phasegate._files import LocatedValueError
from phasegate.phases.checks import (
    CommandCheck,
    Criterion,
    FileExists,
    MinLines,
    Rubric,
    Said,
    check_as_file,
)
from phasegate.phases.model import Task
from phasegate.phases.pipeline import Stage
from phasegate.phases.sentences import (
    Reading,
    SentenceError,
    checks_from_text,
    read_field,
    read_sentence,
)


def test_a_path_that_exists_is_a_file_exists_check() -> None:
    """ "PATH exists" names the file, nothing more."""
    assert read_sentence("test-plan.md exists") == (FileExists(path="test-plan.md"),)


def test_more_than_n_lines_asks_for_n_plus_one() -> None:
    """ ">100 lines" is strictly more than 100: a min_lines of 101, after the file's own
    check."""
    assert read_sentence("architecture.md exists and has >100 lines") == (
        FileExists(path="architecture.md"),
        MinLines(path="architecture.md", n=101),
    )


@pytest.mark.parametrize(
    "bound",
    [">=100 lines", ">= 100 lines", "≥100 lines", "at least 100 lines", "AT LEAST 100 lines"],
)
def test_at_least_n_lines_asks_for_n(bound: str) -> None:
    """ ">=", "≥" and "at least" all include N itself."""
    checks = read_sentence(f"a.md exists and has {bound}")
    assert checks[-1] == MinLines(path="a.md", n=100)


def test_a_file_that_has_lines_without_exists_is_the_line_check_alone() -> None:
    """ "PATH has >N lines" names its own file (a min_lines check needs it to exist)."""
    assert read_sentence("notes.md has >2 lines") == (MinLines(path="notes.md", n=3),)


def test_a_command_that_passes_is_split_as_a_shell_would_split_it() -> None:
    """No shell runs it: quotes group words, and an ``and`` inside them joins nothing."""
    assert read_sentence("python3 -c 'print(1 and 2)' passes") == (
        CommandCheck(argv=("python3", "-c", "print(1 and 2)")),
    )


def test_clauses_joined_by_and_are_several_checks_in_order() -> None:
    """Each clause its own check(s); the seed's implementer condition."""
    assert read_sentence("src/main.go exists and make test passes") == (
        FileExists(path="src/main.go"),
        CommandCheck(argv=("make", "test")),
    )
    assert read_sentence("make lint passes and a.md exists and has at least 3 lines") == (
        CommandCheck(argv=("make", "lint")),
        FileExists(path="a.md"),
        MinLines(path="a.md", n=3),
    )


def test_odd_spacing_case_quotes_backticks_and_a_final_full_stop_are_read() -> None:
    """What people type: extra spaces, tabs, capitals, a quoted path with a space, a
    command in backticks, a sentence ending with a full stop."""
    assert read_sentence("  'my notes.md'   Exists\tAND  has  >  4  lines. ") == (
        FileExists(path="my notes.md"),
        MinLines(path="my notes.md", n=5),
    )
    assert read_sentence("`make test` passes.") == (CommandCheck(argv=("make", "test")),)


def test_a_word_that_merely_contains_and_does_not_split_the_sentence() -> None:
    """Only ``and`` as a word between clauses joins them."""
    assert read_sentence("brand/android.md exists") == (FileExists(path="brand/android.md"),)


@pytest.mark.parametrize(
    "sentence",
    [
        "the design covers every endpoint",
        "a.md exists and reads well",
        "has >3 lines",
        "make passes and has >3 lines",
        "my notes.md exists",
        "a.md exists and",
        "'a.md exists",
        "the README's tone is friendly",
    ],
)
def test_a_sentence_in_none_of_the_forms_becomes_one_criterion_a_grader_judges(
    sentence: str,
) -> None:
    """The whole sentence, as written (not cut at its ``and``): one criterion of a rubric."""
    assert read_sentence(sentence) == (Rubric(criteria=(Criterion(text=sentence.strip()),)),)


@pytest.mark.parametrize(
    ("sentence", "says"),
    [
        ("   ", "the sentence is empty"),
        ("a.md has >=0 lines", "n: Input should be greater than or equal to 1"),
        ("../secret.md exists", "leaves the work directory"),
    ],
)
def test_a_sentence_that_says_nothing_or_names_a_bad_check_is_refused_saying_why(
    sentence: str, says: str
) -> None:
    """An empty sentence, or a form naming a check its model refuses, never reaches a grader."""
    with pytest.raises(SentenceError, match=re.escape(says)):
        read_sentence(sentence)


def test_what_a_graded_sentence_became_says_a_grader_judges_it() -> None:
    """``pipeline check`` prints it."""
    (reading,) = Stage(name="s", prompt="p", exit_when="the design is sound").sentences
    assert reading.graded
    assert (
        reading.describe() == '"the design is sound" → a grader judges it (rubric of one criterion)'
    )


@pytest.mark.parametrize(
    "sentence", ["../secrets.md exists", "/etc/passwd exists and has >1 lines", "../x has >3 lines"]
)
def test_a_path_outside_the_work_directory_is_refused_as_a_structured_check_would_be(
    sentence: str,
) -> None:
    """The check is built through the structured check's model, WorkdirPath and all."""
    with pytest.raises(SentenceError, match="leaves the work directory"):
        read_sentence(sentence)


def test_an_until_value_is_a_check_written_kind_value_or_a_sentence() -> None:
    """``said: DONE`` stays a check; a sentence becomes its checks; a single word before a
    colon is taken as a kind meant, and refused as one."""
    assert checks_from_text("said: DONE") == (Said(text="DONE"),)
    assert checks_from_text("out.md exists and pytest -q passes") == (
        FileExists(path="out.md"),
        CommandCheck(argv=("pytest", "-q")),
    )
    with pytest.raises(ValueError, match="is not a check: write KIND: VALUE"):
        checks_from_text("nope: 1")


def test_a_field_may_be_one_sentence_or_a_list_mixing_sentences_and_checks() -> None:
    """Each sentence is replaced by its checks where it stood; a check is left as it is."""
    data, readings = read_field(
        {"exit_when": [{"said": "X"}, "a.md exists and make passes"]}, "exit_when"
    )
    assert data["exit_when"] == [
        {"said": "X"},
        FileExists(path="a.md"),
        CommandCheck(argv=("make",)),
    ]
    assert readings == (
        Reading(
            "a.md exists and make passes", (FileExists(path="a.md"), CommandCheck(argv=("make",)))
        ),
    )
    assert read_field({"exit_when": [{"said": "X"}]}, "exit_when") == (
        {"exit_when": [{"said": "X"}]},
        (),
    )


def test_a_reading_describes_its_checks_as_a_file_writes_them() -> None:
    """One line: the sentence, then each check in its file form."""
    reading = Reading("a.md exists and has >9 lines", read_sentence("a.md exists and has >9 lines"))
    assert reading.describe() == (
        '"a.md exists and has >9 lines" → file_exists: a.md; min_lines: {path: a.md, n: 10}'
    )


def test_a_stage_written_in_sentences_is_the_stage_written_in_checks() -> None:
    """The same checks, the same dump and file form; only the stage remembers the sentence."""
    said = Stage(name="s", prompt="p", exit_when="a.md exists and has >1 lines")
    written = Stage(
        name="s",
        prompt="p",
        exit_when=[{"file_exists": "a.md"}, {"min_lines": {"path": "a.md", "n": 2}}],
    )
    assert said.exit_when == written.exit_when
    assert said.model_dump() == written.model_dump()
    assert [check_as_file(c) for c in said.exit_when] == [
        {"file_exists": "a.md"},
        {"min_lines": {"path": "a.md", "n": 2}},
    ]
    assert [r.sentence for r in said.sentences] == ["a.md exists and has >1 lines"]
    assert written.sentences == ()


def test_a_refused_sentence_names_the_field_it_stands_in() -> None:
    """One sentence: the field; in a list: its item."""
    with pytest.raises(ValueError, match="leaves the work directory"):
        Stage(name="s", prompt="p", exit_when="../a.md exists")
    with pytest.raises(LocatedValueError) as raised:
        read_field({"exit_when": [{"said": "X"}, "   "]}, "exit_when")
    assert raised.value.location == ("exit_when", 1)
    with pytest.raises(LocatedValueError) as raised:
        read_field({"exit_when": "../a.md exists"}, "exit_when")
    assert raised.value.location == ("exit_when",)


def test_a_phase_and_a_task_take_their_checks_as_sentences_too() -> None:
    """A phase's ``checks`` and the task's own."""
    task = Task.model_validate(
        {
            "name": "t",
            "phases": [{"name": "build", "instructions": "Build.", "checks": "make passes"}],
            "checks": ["dist/app exists"],
        }
    )
    assert task.phases[0].checks == (CommandCheck(argv=("make",)),)
    assert task.phases[0].sentences[0].sentence == "make passes"
    assert task.checks == (FileExists(path="dist/app"),)
    assert task.sentences[0].checks == (FileExists(path="dist/app"),)
