"""Annotations are single workflow commands whatever text they carry."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from phasegate._github.workflow_commands import (
    Annotation,
    escape_data,
    escape_property,
    inert_lines,
)
from tests.helpers.fuzz import bounded_memory, hostile_text
from tests.helpers.github_runner import as_shown, commands_in

COMMAND_TEXT = st.one_of(
    hostile_text,
    st.sampled_from(
        [
            "::error::x",
            "a\n::add-mask::secret",
            "a\r::stop-commands::tok",
            "%0A::error::x",
            "##[error]x",
            "a,b:c=d",
            "%25",
            " ",
        ]
    ),
)


def test_data_escapes_percent_first_so_escapes_in_the_text_survive() -> None:
    assert escape_data("100%0A\r\n") == "100%250A%0D%0A"


def test_properties_also_escape_colon_and_comma() -> None:
    assert escape_property("a:b,c%") == "a%3Ab%2Cc%25"


def test_the_legacy_command_mark_is_shown_escaped_and_never_made_anew() -> None:
    assert escape_data("a ##[error]b ###[c") == "a #\\x23[error]b ##\\x23[c"
    assert escape_property("##[x") == "#\\x23[x"


def test_inert_lines_keep_text_readable_but_no_line_a_command() -> None:
    text = "ok\n  ::error::x\r##[warning]y\r\n::"

    assert inert_lines(text) == "ok\n  \\x3a:error::x\n#\\x23[warning]y\n\\x3a:"
    assert commands_in(inert_lines(text)) == []


def test_an_annotation_on_a_file_reads_back_as_the_runner_reads_it() -> None:
    line = Annotation("error", "phasegate no_changes", "bad\nthing", file="src/a,b.py").command()

    (command,) = commands_in(line)

    assert command.name == "error"
    assert command.properties == {"file": "src/a,b.py", "title": "phasegate no_changes"}
    assert command.data == "bad\nthing"


@pytest.mark.fuzz
@given(message=COMMAND_TEXT, title=COMMAND_TEXT, file=st.none() | COMMAND_TEXT)
def test_any_text_in_an_annotation_gives_exactly_that_one_command(
    message: str, title: str, file: str | None
) -> None:
    with bounded_memory():
        line = Annotation("warning", f"phasegate {title}", message, file=file).command()
        commands = commands_in(line)

    assert len(commands) == 1, line
    assert "##[" not in line
    (command,) = commands
    assert command.name == "warning"
    assert command.data == as_shown(message)
    expected = {"title": as_shown(f"phasegate {title}".strip())}
    if file is not None and file.strip():
        expected = {"file": as_shown(file.strip()), **expected}
    assert command.properties == expected
