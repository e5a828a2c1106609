"""The GITHUB_OUTPUT text sets exactly the outputs meant, whatever their values hold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from phasegate._github.outputs import (
    FINAL_MESSAGE_LIMIT,
    OUTPUT_NAMES,
    output_file_text,
    step_outputs,
)
from phasegate._github.view import ReportView, read_report_view
from phasegate.evidence.transcript import Usage
from tests.helpers.fuzz import bounded_memory, hostile_text
from tests.helpers.github_reports import hostile_run_report, write_report
from tests.helpers.github_runner import file_command_pairs

DELIMITER_LIKE = st.sampled_from(
    ["EOF", "phasegate_", "ghadelimiter_1", "", "\r", "\n", "x\r\ny", "verdict=accepted", "a<<b"]
)
VALUE = st.one_of(hostile_text, DELIMITER_LIKE, st.lists(DELIMITER_LIKE).map("\n".join))


@pytest.mark.fuzz
@given(values=st.lists(VALUE, min_size=1, max_size=5))
def test_any_values_read_back_exactly_and_set_no_other_output(values: list[str]) -> None:
    outputs = {f"out{i}": value for i, value in enumerate(values)}
    with bounded_memory():
        text = output_file_text(outputs)

    assert file_command_pairs(text) == list(outputs.items())


def test_a_multi_line_value_uses_a_random_delimiter_absent_from_it() -> None:
    text = output_file_text({"final_message": "one\nEOF\ntwo"})

    first = text.split("\n", 1)[0]
    assert first.startswith("final_message<<phasegate_")
    assert first.split("<<", 1)[1] not in "one\nEOF\ntwo"
    assert output_file_text({"final_message": "one\ntwo"}).split("\n", 1)[0] != first


def test_every_output_is_written_even_when_the_report_knows_nothing() -> None:
    view = ReportView(kind="task", name="t", verdict="error", exit_code=3)

    outputs = step_outputs(view, report_file=Path("r.json"), log_file=None, html_report=None)

    assert tuple(outputs) == OUTPUT_NAMES
    assert outputs["total_cost_usd"] == outputs["session_id"] == outputs["log_file"] == ""
    assert (outputs["verdict"], outputs["success"], outputs["exit_code"]) == ("error", "false", "3")
    assert outputs["report_file"] == str(Path("r.json").resolve())


def test_figures_become_plain_strings_and_the_summary_one_compact_line() -> None:
    view = ReportView(
        kind="task",
        name="t",
        verdict="accepted",
        exit_code=0,
        usage=Usage(
            input_tokens=10,
            output_tokens=20,
            cache_read_input_tokens=30,
            cache_creation_input_tokens=40,
            cost_usd=0.0125,
        ),
        summary_json={"files": ["a.py"], "note": "two\nlines"},
        final_message="x" * (FINAL_MESSAGE_LIMIT + 10),
    )

    outputs = step_outputs(view, report_file=Path("r"), log_file=None, html_report=None)

    assert outputs["summary_json"] == '{"files":["a.py"],"note":"two\\nlines"}'
    assert (outputs["input_tokens"], outputs["output_tokens"]) == ("10", "20")
    assert (outputs["cache_read_tokens"], outputs["cache_write_tokens"]) == ("30", "40")
    assert outputs["total_cost_usd"] == "0.0125"
    assert outputs["final_message"].startswith("x" * FINAL_MESSAGE_LIMIT + "\n[phasegate: cut")


@pytest.mark.fuzz
@given(text=VALUE)
def test_every_output_of_a_report_file_reads_back_as_the_report_has_it(
    tmp_path_factory: pytest.TempPathFactory, text: str
) -> None:
    """Whatever the model wrote, the runner reads the report's own values back."""
    report = hostile_run_report(text)
    path = write_report(tmp_path_factory.getbasetemp() / "fuzz-outputs.json", report)

    with bounded_memory():
        view = read_report_view(path)
        written = output_file_text(
            step_outputs(view, report_file=path, log_file=None, html_report=None)
        )

    outputs = dict(file_command_pairs(written))
    assert tuple(outputs) == OUTPUT_NAMES
    assert (outputs["verdict"], outputs["success"], outputs["exit_code"]) == (
        "rejected",
        "false",
        "1",
    )
    assert outputs["session_id"] == outputs["final_message"] == text
    assert json.loads(outputs["summary_json"]) == report.summary
    assert outputs["issue_codes"] == "claimed_not_changed"
    assert (outputs["phases_accepted"], outputs["phases_rejected"]) == ("0", "1")
