"""Script pieces shared by runner and CLI tests (the example project's bug and its fix)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from phasegate import RunReport
from phasegate.agents.retry import RetryPolicy

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fix-vulnerability"

FIXED_LINE = "    return float(expression)  # only numbers\n"
BUGGY_LINE = "    return eval(expression)  # runs any Python the user sends, not just arithmetic\n"

EDIT: dict[str, Any] = {
    "Edit": {"file_path": "app.py", "old_string": BUGGY_LINE, "new_string": FIXED_LINE}
}
READ: dict[str, Any] = {"Read": {"file_path": "app.py"}}
MARKER = "PHASE 1 COMPLETE: Files have been edited"
GOOD_JSON = (
    '```json\n{"files_changed": ["app.py"], "description": "Replaced eval with float parsing."}'
    "\n```"
)


def codes(report: RunReport) -> set[str]:
    """Every issue code in a report."""
    return {issue.code.value for issue in report.issues}


NO_RETRIES = RetryPolicy(session_retries=0)
"""Fail on the first error, to see a failure as it is."""


INVESTIGATE_THEN_FIX: dict[str, Any] = {
    "name": "investigate-then-fix",
    "phases": [
        {"name": "investigate", "instructions": "Read app.py and find the bug.",
         "require_tools": ["Read"], "allow_tools": ["Read", "Grep", "Glob"]},
        {"name": "fix", "instructions": "Fix it.", "require_tools": ["Edit"],
         "require_changes": True},
        {"name": "summary", "instructions": "Report.", "output_schema": {"type": "object"}},
    ],
}  # fmt: skip
"""Read (only Read, Grep, Glob), then fix with Edit, then report: a task with a tool policy."""
FOUND = "PHASE 1 COMPLETE: Investigation done"
FIXED = "PHASE 2 COMPLETE: Files have been edited"
