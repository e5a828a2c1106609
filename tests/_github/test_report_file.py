"""Reading a report file: any file that is not a report is refused in a message that is safe
to print in a step's log, and text no runner file can hold is made writable."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given

from phasegate._github.outputs import output_file_text, step_outputs
from phasegate._github.view import read_report_view
from phasegate.errors import PhasegateError, UsageError
from tests.helpers.fuzz import bounded_memory, hostile_text
from tests.helpers.github_reports import hostile_run_report, write_report
from tests.helpers.github_runner import commands_in, file_command_pairs


def test_a_report_nested_too_deeply_is_refused_naming_the_file(tmp_path: Path) -> None:
    deep = tmp_path / "report.json"
    deep.write_text('{"phases": ' + "[" * 100_000 + "]" * 100_000 + "}")

    with pytest.raises(UsageError, match="nested") as refused:
        read_report_view(deep)

    assert str(deep) in str(refused.value)


def test_lone_surrogates_in_report_text_become_replacement_characters(tmp_path: Path) -> None:
    report = write_report(tmp_path / "report.json", hostile_run_report("a-SURROGATE-b"))
    report.write_text(report.read_text().replace("SURROGATE", "\\ud800"))

    view = read_report_view(report)
    text = output_file_text(step_outputs(view, report_file=report, log_file=None, html_report=None))

    assert view.final_message == "a-\ufffd-b"
    assert view.problems[0].message == "a-\ufffd-b"
    assert dict(file_command_pairs(text.encode("utf-8").decode()))["final_message"] == "a-\ufffd-b"


@pytest.mark.parametrize(
    "key",
    [
        "\n::error::forged",
        "x\r::add-mask::secret",
        "##[add-mask]secret",
        "a ##[set-output name=verdict;]accepted",
        "::warning::at the start",
    ],
)
def test_an_unexpected_key_is_named_in_a_line_the_runner_does_not_act_on(
    tmp_path: Path, key: str
) -> None:
    report = write_report(tmp_path / "report.json", hostile_run_report("t"), **{key: 1})

    with pytest.raises(UsageError) as refused:
        read_report_view(report)

    line = f"phasegate: error: {refused.value}"
    assert "\n" not in line and "\r" not in line
    assert commands_in(line) == []
    assert str(report) in line


@pytest.mark.fuzz
@given(key=hostile_text)
def test_no_key_turns_the_refusal_into_a_workflow_command(
    tmp_path_factory: pytest.TempPathFactory, key: str
) -> None:
    folder = tmp_path_factory.getbasetemp()
    report = write_report(folder / "fuzz-key.json", hostile_run_report("t"), **{key: [key]})

    with bounded_memory():
        try:
            read_report_view(report)
        except PhasegateError as refused:
            line = f"phasegate: error: {refused}"
            assert commands_in(line) == []
