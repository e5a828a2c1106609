"""Phases enforced before a tool runs, through the real Claude Code CLI: its PreToolUse hook
refuses what the current phase does not allow, the model gets the reason as the call's error,
nothing runs, and a marker printed in the same reply as a call counts for it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from phasegate import Runner, RunReport, Task
from phasegate.evidence.transcript import ToolRefused
from phasegate.testing import Script
from phasegate.testing.pytest_plugin import ScriptedServerFactory
from tests.helpers.scenarios import (
    BUGGY_LINE,
    EDIT,
    FIXED,
    FIXED_LINE,
    FOUND,
    GOOD_JSON,
    INVESTIGATE_THEN_FIX,
    NO_RETRIES,
    READ,
)

pytestmark = pytest.mark.cli


def _run(
    server_for: ScriptedServerFactory, project: Path, replies: list[dict[str, Any]], **task: Any
) -> RunReport:
    server = server_for(Script.model_validate({"replies": replies}))
    agent = server.claude_agent(timeout=90, request_timeout=20)
    definition = Task.model_validate({**INVESTIGATE_THEN_FIX, **task})
    report = Runner(agent, retry=NO_RETRIES).run_sync(definition, project)
    assert not server.unmatched, server.unmatched
    return report


def _refusals(report: RunReport) -> list[tuple[ToolRefused, str]]:
    """Each refusal with the error result the CLI gave the model for that call."""
    assert report.transcript is not None
    results = report.transcript.results_by_call()
    return [
        (entry, results[entry.tool_use_id].content)
        for entry in report.transcript.entries
        if isinstance(entry, ToolRefused)
    ]


def test_an_edit_in_the_reading_phase_is_refused_and_changes_nothing(
    scripted_model_server: ScriptedServerFactory, project: Path
) -> None:
    report = _run(
        scripted_model_server,
        project,
        [{"tools": [READ]}, {"when": "tool_result", "tools": [EDIT]},
         {"when": "tool_error", "text": "Then I stop here."}],
    )  # fmt: skip
    ((refusal, sent),) = _refusals(report)
    assert refusal.name == "Edit" and refusal.phase == 1
    # The CLI gives the model the reason (behind a prefix of its own) as an error result.
    assert refusal.reason in sent
    assert report.transcript is not None
    assert not report.transcript.results_by_call()[refusal.tool_use_id].ok
    assert BUGGY_LINE in (project / "app.py").read_text()
    assert report.verdict == "rejected"
    assert report.phases[0].tools == {"Read": 1} and report.phases[0].tool_errors == 0


def test_the_marker_in_the_same_reply_lets_the_next_phases_edit_run(
    scripted_model_server: ScriptedServerFactory, project: Path
) -> None:
    """Refused once, the model claims phase 1 and edits in one answer: the edit runs."""
    report = _run(
        scripted_model_server,
        project,
        [{"tools": [READ]}, {"when": "tool_result", "tools": [EDIT]},
         {"when": "tool_error", "text": FOUND, "tools": [EDIT]},
         {"when": "tool_result", "text": f"{FIXED}\n\n{GOOD_JSON}"}],
    )  # fmt: skip
    assert report.verdict == "accepted", report.issues
    assert [r.tool for r in report.phases[0].refusals] == ["Edit"]
    assert report.phases[1].tools == {"Edit": 1}
    assert FIXED_LINE in (project / "app.py").read_text()


def test_submit_summary_before_the_edit_is_refused(
    scripted_model_server: ScriptedServerFactory, project: Path
) -> None:
    summary = {"submit_summary": {"summary": {"files_changed": ["app.py"]}}}
    report = _run(
        scripted_model_server,
        project,
        [{"tools": [summary]}, {"when": "tool_error", "text": "Giving up."}],
        completion="tool",
    )
    ((refusal, sent),) = _refusals(report)
    assert refusal.name == "mcp__phasegate__submit_summary"
    assert "phase 1 (investigate) is not complete" in sent
    assert report.summary is None and report.verdict == "rejected"


def test_a_protected_test_refused_to_edit_and_changed_through_bash_fails_the_gate(
    scripted_model_server: ScriptedServerFactory, project: Path
) -> None:
    """The hook refuses the Edit; Bash walks past any hook, the disk check at the gate does
    not: the run is rejected with an issue naming the file, which is no work of the agent's."""
    tests = project / "tests"
    tests.mkdir()
    (tests / "test_app.py").write_text("def test_it():\n    assert True\n")
    loosen = {"file_path": "tests/test_app.py", "old_string": "True", "new_string": "1"}
    report = _run(
        scripted_model_server,
        project,
        [{"tools": [READ]}, {"when": "tool_result", "text": FOUND, "tools": [{"Edit": loosen}]},
         {"when": "tool_error", "tools": [EDIT]},
         {"when": "tool_result",
          "tools": [{"Bash": {"command": "sed -i s/True/1/ tests/test_app.py"}}]},
         {"when": "tool_result", "text": f"{FIXED}\n\n{GOOD_JSON}"},
         {"when": "user", "text": "I changed the test; I stop."}],
        protect=["tests/**"],
    )  # fmt: skip
    ((refusal, sent),) = _refusals(report)
    assert refusal.name == "Edit" and "protected by `tests/**`" in sent
    assert "assert 1" in (tests / "test_app.py").read_text()  # Bash did change it
    assert report.verdict == "rejected"
    (issue,) = [i for i in report.issues if i.code.value == "protected_path_changed"]
    assert issue.path == "tests/test_app.py"
    assert "tests/test_app.py" not in report.files_changed
