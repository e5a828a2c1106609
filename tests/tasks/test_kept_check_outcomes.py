"""A check is not run again while nothing *it* looks at changed: a command, a file or a
folder look at the disk, so a phase accepted through ``phase_complete`` and judged again at
the stop, on the same disk, keeps the outcome of the call's run (the agent's closing words
and the completion call itself change the phase's window, not the disk).

Each scenario runs with the in-process scripted agent and with the real Claude Code CLI
against the scripted model server (``agent_kind``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from phasegate import Runner
from phasegate.agents.protocol import Agent
from phasegate.phases.loading import task_from_mapping
from phasegate.telemetry.events import RunEvent
from phasegate.testing import Script, ScriptedAgent
from phasegate.testing.pytest_plugin import ScriptedServerFactory


def test_a_phase_accepted_by_its_call_keeps_its_disk_checks_at_the_stop_on_the_same_disk(
    tmp_path: Path, agent_kind: str, scripted_model_server: ScriptedServerFactory
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    task = task_from_mapping({
        "name": "write-once",
        "completion": "tool",
        "phases": [{"name": "write", "instructions": "Write a.txt.", "require_changes": True,
                    "checks": [{"command": [sys.executable, "-c", "pass"]},
                               {"file_exists": "a.txt"},
                               {"tools_used": ["Write"]}]}],
    })  # fmt: skip
    replies: list[dict[str, Any]] = [
        {"text": "Writing.", "tools": [{"Write": {"file_path": "a.txt", "content": "a\n"}}]},
        {"when": "tool_result", "tools": [{"phase_complete": {"phase": 1, "note": "done"}}]},
        {"when": "tool_result", "text": "All done."},
    ]  # fmt: skip
    script = Script.model_validate({"replies": replies})
    agent: Agent = ScriptedAgent(script)
    if agent_kind == "claude":
        agent = scripted_model_server(script).claude_agent(timeout=90, request_timeout=20)
    events: list[RunEvent] = []

    report = Runner(agent, on_event=events.append).run_sync(task, work)

    assert report.verdict == "accepted", report.issues
    ran = [(e.fields["check"], e.fields["run"]) for e in events if e.event == "check.ran"]
    assert [check for check, _ in ran if check in (0, 1)] == [0, 1]  # once each, at the call
    assert [c.run for c in report.phases[0].checks][:2] == [1, 1]
