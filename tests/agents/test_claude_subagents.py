"""A subagent's work in a live run: the real Claude Code CLI, a scripted model whose main
agent hands the Edit to a subagent through the Agent tool, and phasegate's gate.

The scripted model server answers the subagent's own conversation (its first user message is
the Agent call's prompt) with the replies written for it (``agent:`` the call's
description), whatever order the two conversations' requests arrive in.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from phasegate import RunEvent, Runner, Task
from phasegate.phases.pipeline import Pipeline
from phasegate.pipelines.runner import PipelineRunner
from phasegate.testing import Script
from phasegate.testing.pytest_plugin import ScriptedServerFactory
from tests.helpers.scenarios import BUGGY_LINE, EDIT, FIXED_LINE, GOOD_JSON, MARKER, NO_RETRIES

pytestmark = pytest.mark.cli

DELEGATE: dict[str, Any] = {
    "Agent": {
        "description": "fix app.py",
        "prompt": "Replace the eval in app.py with float parsing.",
        "subagent_type": "general-purpose",
        "run_in_background": False,
    }
}


def _script(*replies: dict[str, Any]) -> Script:
    return Script.model_validate({"replies": list(replies)})


def test_an_edit_delegated_to_a_subagent_passes_the_gate_and_the_report_names_it(
    task: Task, project: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """The phase that requires an Edit is accepted; its figures hold the subagent's Edit,
    and the report, the events and the transcript say the subagent made it."""
    server = scripted_model_server(
        _script(
            {"tools": [DELEGATE]},
            {"agent": "fix app.py", "tools": [EDIT]},
            {"agent": "fix app.py", "text": "Done: app.py no longer calls eval."},
            {"text": f"{MARKER}\n{GOOD_JSON}"},
        )
    )
    events: list[RunEvent] = []
    agent = server.claude_agent(timeout=90, request_timeout=20)

    report = Runner(agent, on_event=events.append, retry=NO_RETRIES).run_sync(task, project)

    assert report.verdict == "accepted", [i.message for i in report.issues]
    assert (project / "app.py").read_text().count(FIXED_LINE) == 1
    assert BUGGY_LINE not in (project / "app.py").read_text()
    edit = report.phases[0]
    assert edit.tools == {"Agent": 1, "Edit": 1}
    (work,) = edit.subagents
    assert (work.type, work.tools, work.tool_errors, work.files) == (
        "general-purpose", {"Edit": 1}, 0, ["app.py"]
    )  # fmt: skip
    assert work.parent is not None and report.subagents == [work]
    (completed,) = [
        e.fields for e in events if e.event == "phase.completed" and e.fields["phase"] == 1
    ]
    assert completed["subagents"] == [work.model_dump(mode="json")]
    assert server.unmatched == []
    assert [r.last for r in server.subagent_requests("fix app.py")] == ["start", "tool_result"]


def test_a_subagent_the_script_has_no_reply_for_says_so(
    task: Task, project: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """Loudly, not with the main agent's next reply: the subagent's request is unmatched,
    named by its Agent call's description."""
    server = scripted_model_server(_script({"tools": [DELEGATE]}, {"text": MARKER}))

    Runner(server.claude_agent(timeout=90, request_timeout=20), retry=NO_RETRIES).run_sync(
        task, project
    )

    (unmatched, *_) = server.unmatched
    assert unmatched.agent == "fix app.py" and unmatched.reply == 0
    assert "no script reply is for the conversation of subagent 'fix app.py'" in (
        unmatched.describe()
    )
    assert BUGGY_LINE in (project / "app.py").read_text()


def test_a_stage_whose_file_a_subagent_writes_passes_and_names_the_subagent(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """The same rule for a pipeline's stage: the subagent's Write counts for the stage's
    tools_used check and is shown apart in the stage's record and its event."""
    pipeline = Pipeline.model_validate(
        {
            "name": "delegated",
            "stages": [
                {
                    "name": "build",
                    "prompt": "Write build.txt.",
                    "exit_when": [{"file_exists": "build.txt"}, {"tools_used": ["Write"]}],
                }
            ],
        }
    )
    delegate = {"Agent": {**DELEGATE["Agent"], "prompt": "Write build.txt."}}
    write = {"Write": {"file_path": "build.txt", "content": "built\n"}}
    server = scripted_model_server(
        _script(
            {"tools": [delegate]},
            {"agent": "fix app.py", "tools": [write]},
            {"agent": "fix app.py", "text": "Written."},
            {"text": "Built by a subagent."},
        )
    )
    events: list[RunEvent] = []
    work = tmp_path / "work"
    work.mkdir()
    runner = PipelineRunner(
        server.claude_agent(timeout=90, request_timeout=20), on_event=events.append,
        retry=NO_RETRIES,
    )  # fmt: skip

    report = runner.run_sync(pipeline, work)

    assert report.verdict == "accepted", report.stages[0].checks
    (stage,) = report.stages
    assert stage.tools == {"Agent": 1, "Write": 1}
    (work_done,) = stage.subagents
    assert (work_done.type, work_done.tools, work_done.files) == (
        "general-purpose", {"Write": 1}, ["build.txt"]
    )  # fmt: skip
    (completed,) = [e.fields for e in events if e.event == "stage.completed"]
    assert completed["subagents"] == [work_done.model_dump(mode="json")]
