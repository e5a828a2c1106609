"""The words of a stage's exit checks (phasegate.validators.exit_describe)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter

from phasegate.phases.checks import Check
from phasegate.validators.exit_describe import describe, describe_task, listing

CHECK = TypeAdapter[Check](Check)
"""Checks as a pipeline file writes them: ``{kind: settings}``."""

ITEMS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["items"],
    "properties": {"items": {"type": "array", "items": {"type": "integer"}}},
}


def check_of(data: dict[str, Any]) -> Check:
    """A check from its file form."""
    return CHECK.validate_python(data)


@pytest.mark.parametrize(
    ("data", "text"),
    [
        ({"file_exists": "architecture.md"}, "architecture.md exists"),
        (
            {"min_lines": {"path": "architecture.md", "n": 20}},
            "architecture.md has at least 20 lines",
        ),
        ({"min_lines": {"path": "a.md", "n": 1}}, "a.md has at least 1 line"),
        ({"json_valid": "out.json"}, "out.json holds valid JSON"),
        (
            {"json_valid": {"path": "out.json", "schema": ITEMS_SCHEMA}},
            "out.json holds JSON valid against its schema",
        ),
        (
            {"command": {"argv": ["python", "-m", "pytest", "-q"], "timeout": 60}},
            "`python -m pytest -q` exits with 0 within 60 s",
        ),
        (
            {"command": {"argv": ["sh", "-c", "exit 3"], "exit_code": 3, "timeout": 1.5}},
            "`sh -c 'exit 3'` exits with 3 within 1.5 s",
        ),
        ({"changed": "src/**/*.py"}, "a file matching src/**/*.py is added or modified"),
        ({"tools_used": ["Edit"]}, "Edit is used successfully at least once"),
        (
            {"tools_used": ["Edit", "MultiEdit", "Write"]},
            "Edit, MultiEdit or Write is used successfully at least once",
        ),
    ],
)
def test_each_kind_of_check_describes_what_must_hold(data: dict[str, Any], text: str) -> None:
    """The description is a short clause naming the file, command, glob or tools."""
    assert describe(check_of(data)) == text


def test_a_stage_task_is_described_like_a_check() -> None:
    """A stage's phased task reads as one more clause in the stage's list of checks."""
    assert describe_task("fix") == "every phase of task fix is accepted by the gate"


def test_a_listing_names_ten_then_counts_the_rest() -> None:
    """Ten names, then "and N more"; ten or fewer are all named."""
    names = [f"f{i:02}" for i in range(12)]
    assert listing(names[:10]) == ", ".join(names[:10])
    assert listing(names) == ", ".join(names[:10]) + " and 2 more"
