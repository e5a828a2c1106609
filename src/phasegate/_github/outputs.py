"""The step's outputs, and the ``GITHUB_OUTPUT`` file text that sets them.

The runner reads that file line by line, splitting at ``\\n``: ``NAME=VALUE`` sets an output
from one line; ``NAME<<DELIMITER`` takes every following line up to one equal to the
delimiter. A value holding a line break is written in the second form with a random
delimiter that no line of the value equals, so a value can neither end early nor set
another output. Every output is always written (empty when unknown), so a later step never
reads a stale value.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from phasegate._github.view import ReportView
from phasegate._github.workflow_commands import random_token

OUTPUT_NAMES = (
    "verdict",
    "success",
    "exit_code",
    "report_file",
    "summary_json",
    "phases_accepted",
    "phases_rejected",
    "issue_codes",
    "total_cost_usd",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "grader_cost_usd",
    "grader_input_tokens",
    "grader_output_tokens",
    "duration_ms",
    "session_id",
    "final_message",
    "log_file",
    "html_report",
)
"""Every output the step sets, in the order of the docs."""

FINAL_MESSAGE_LIMIT = 64 * 1024
"""Characters of the final message kept in its output; a longer one is cut with a note."""


def step_outputs(
    view: ReportView, *, report_file: Path, log_file: Path | None, html_report: Path | None
) -> dict[str, str]:
    """Each output's value, as the string GitHub will hold."""
    usage, graded = view.usage, view.grader_usage
    return {
        "verdict": view.verdict,
        "success": "true" if view.verdict == "accepted" else "false",
        "exit_code": str(view.exit_code),
        "report_file": str(report_file.resolve()),
        "summary_json": _compact(view.summary_json),
        "phases_accepted": str(view.count("accepted")),
        "phases_rejected": str(view.count("rejected")),
        "issue_codes": ",".join(view.issue_codes),
        "total_cost_usd": _usd(usage.cost_usd),
        "input_tokens": str(usage.input_tokens),
        "output_tokens": str(usage.output_tokens),
        "cache_read_tokens": str(usage.cache_read_input_tokens),
        "cache_write_tokens": str(usage.cache_creation_input_tokens),
        "grader_cost_usd": "0" if graded.is_zero else _usd(graded.cost_usd),
        "grader_input_tokens": str(graded.input_tokens),
        "grader_output_tokens": str(graded.output_tokens),
        "duration_ms": str(view.duration_ms),
        "session_id": view.session_id or "",
        "final_message": _capped(view.final_message or ""),
        "log_file": str(log_file.resolve()) if log_file is not None else "",
        "html_report": str(html_report.resolve()) if html_report is not None else "",
    }


def output_file_text(outputs: Mapping[str, str]) -> str:
    """The lines that set ``outputs`` when appended to ``GITHUB_OUTPUT``."""
    lines = []
    for name, value in outputs.items():
        if "\n" not in value and "\r" not in value:
            lines.append(f"{name}={value}\n")
            continue
        delimiter = _delimiter_for(value)
        lines.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    return "".join(lines)


def _delimiter_for(value: str) -> str:
    lines = set(value.split("\n"))
    while True:
        delimiter = f"phasegate_{random_token()}"
        if delimiter not in lines:
            return delimiter


def _usd(cost: float | None) -> str:
    """Dollars to a millionth, without trailing zeros (``0.00536``); empty when unknown."""
    if cost is None:
        return ""
    return f"{cost:.6f}".rstrip("0").rstrip(".")


def _compact(value: object) -> str:
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _capped(text: str) -> str:
    if len(text) <= FINAL_MESSAGE_LIMIT:
        return text
    return text[:FINAL_MESSAGE_LIMIT] + f"\n[phasegate: cut at {FINAL_MESSAGE_LIMIT} characters]"
