"""Annotations are single workflow commands whatever text they carry."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from phasegate._github.workflow_commands import Annotation, escape_data, escape_property
from tests.helpers.fuzz import bounded_memory, hostile_text
from tests.helpers.github_runner import commands_in

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
    (command,) = commands
    assert command.name == "warning"
    assert command.data == message
    expected = {"title": f"phasegate {title}".strip()}
    if file is not None and file.strip():
        expected = {"file": file.strip(), **expected}
    assert command.properties == expected
