"""docs/testing.md's scripted grader plays as the page tells it, through a real gate: the
agent writes, the first grader session finds the criterion not met, the feedback brings the
fix, the second finds it met."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from phasegate import RunEvent, Runner, Task
from phasegate.testing import Script, ScriptedAgent
from phasegate.testing.pytest_plugin import ScriptedServerFactory

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "testing.md"
FIXED = "# Notes\n\nRun `make test`.\n"


def _page_example() -> tuple[Task, Script]:
    """The section's task (its phases) and script, as the page writes them."""
    section = DOC.read_text(encoding="utf-8").split("\n## A scripted grader\n", 1)[1]
    phases, replies = re.findall(r"```yaml\n(.*?)```", section.split("\n## ")[0], re.S)
    task = Task.model_validate({"name": "notes", **yaml.safe_load(phases)})
    return task, Script.model_validate(yaml.safe_load(replies))


def _gates(events: list[RunEvent]) -> list[list[str]]:
    """The issue codes of each gate decision of the run, in order."""
    return [list(e.fields["issues"]) for e in events if e.event == "phase.gate"]


def test_the_scripted_grader_example_plays_in_process(tmp_path: Path) -> None:
    """With the in-process scripted agent: rejected once for the criterion, then accepted
    with the fix, every reply used where the page says."""
    task, script = _page_example()
    agent = ScriptedAgent(script)
    events: list[RunEvent] = []

    report = Runner(agent, on_event=events.append).run_sync(task, tmp_path)

    assert report.verdict == "accepted", [i.message for i in report.issues]
    assert _gates(events) == [["criterion_not_met"], []]
    assert (tmp_path / "NOTES.md").read_text() == FIXED
    assert agent.unmatched == []


@pytest.mark.cli
def test_the_scripted_grader_example_plays_with_the_real_cli(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """With Claude Code against the scripted model server: the two grader sessions are told
    apart from the agent's conversation and take the two grader replies, in order."""
    task, script = _page_example()
    server = scripted_model_server(script)
    events: list[RunEvent] = []
    agent = server.claude_agent(timeout=90, request_timeout=20)

    report = Runner(agent, on_event=events.append).run_sync(task, tmp_path)

    assert report.verdict == "accepted", [i.message for i in report.issues]
    assert _gates(events) == [["criterion_not_met"], []]
    assert (tmp_path / "NOTES.md").read_text() == FIXED
    graded = server.grader_requests()
    assert [(r.last, r.reply) for r in graded] == [
        ("start", script.replies[2]), ("start", script.replies[5])
    ]  # fmt: skip
    assert all(not r.grader for r in server.main_requests())
    assert server.unmatched == [] and server.exhausted


@pytest.mark.cli
def test_the_scripted_workflow_agent_example_plays_with_the_real_cli(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """The page's script, with the agent it names: the workflow agent's two requests take
    the two ``workflow:`` replies, notes.md is edited, and the main conversation ends on the
    script's result."""
    import asyncio

    from phasegate.agents.protocol import AgentRequest, EntryCollector

    section = DOC.read_text(encoding="utf-8").split("\n## A scripted Workflow agent\n", 1)[1]
    replies, *_ = re.findall(r"```yaml\n(.*?)```", section.split("\n## ")[0], re.S)
    (python,) = re.findall(r"```python\n(.*?)```", section.split("\n## ")[0], re.S)
    script = Script.model_validate(yaml.safe_load(replies))
    server = scripted_model_server(script)
    assert 'allowed_tools=["Workflow"]' in python
    agent = server.claude_agent(allowed_tools=["Workflow"])
    (tmp_path / "notes.md").write_text("old\n")

    asyncio.run(agent.run(AgentRequest(prompt="Run the workflow.", workdir=tmp_path),
                          EntryCollector()))  # fmt: skip

    assert (tmp_path / "notes.md").read_text() == "new\n"
    assert [(r.last, r.reply) for r in server.workflow_requests("edit notes")] == [
        ("start", script.replies[2]), ("tool_result", script.replies[3])
    ]  # fmt: skip
    assert server.unmatched == [] and server.exhausted
