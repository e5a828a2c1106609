"""One exit check written on one line (``KIND: VALUE``), as ``/phasegate:loop --until`` takes
it, and the one-stage pipeline a loop of any checks runs as."""

from __future__ import annotations

import re

import pytest

from phasegate.phases.checks import CommandCheck, MinLines, Said, check_from_text
from phasegate.phases.loop import LOOP_STAGE, loop_pipeline


def test_a_command_given_as_one_string_is_split_as_a_shell_splits_it() -> None:
    """No shell runs it: the words become the argv, quotes grouping them."""
    check = check_from_text("command: python3 -c 'raise SystemExit(0)'")
    assert check == CommandCheck(argv=("python3", "-c", "raise SystemExit(0)"))


def test_settings_are_read_as_yaml_and_a_promise_as_typed() -> None:
    """A mapping of settings as in a pipeline file; ``said`` keeps colons in its text."""
    assert check_from_text("min_lines: {path: a.md, n: 3}") == MinLines(path="a.md", n=3)
    assert check_from_text("said: all: done") == Said(text="all: done")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("pytest -q", "is not a check: write KIND: VALUE"),
        ("nope: 1", "is not a check"),
        ("min_lines: a.md", "needs a mapping of settings"),
        ("command: 'unclosed", "the command No closing quotation"),
        ("said: <promise>X</promise>", "without the <promise> tags"),
        ("file_exists: ../outside", "'file_exists: ../outside'"),
    ],
)
def test_a_check_that_cannot_be_read_says_why(text: str, says: str) -> None:
    """Each error quotes the check and says what is wrong."""
    with pytest.raises(ValueError, match=re.escape(says)):
        check_from_text(text)


def test_a_loop_of_any_checks_is_one_stage_with_its_iterations_as_checks() -> None:
    """``iterations`` checks: the first, then ``iterations - 1`` retries; no revisions."""
    pipeline = loop_pipeline(
        "Fix the tests.", [check_from_text("command: pytest -q")], 5, name="loop"
    )
    (stage,) = pipeline.stages
    assert stage.name == LOOP_STAGE and stage.prompt == "Fix the tests."
    assert stage.on_fail.retry == 4 and pipeline.max_revisions == 0
    assert stage.exit_when == (CommandCheck(argv=("pytest", "-q")),)
