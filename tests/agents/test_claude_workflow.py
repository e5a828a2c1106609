"""A workflow agent's work in a live session: the real Claude Code CLI (2.1.332), a scripted
model whose main agent calls the Workflow tool with a script of one ``agent()``, and the
scripted model server answering that workflow agent's own conversation with its
``workflow:`` replies (its label read from the script the server sent).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from phasegate.agents.protocol import AgentRequest, EntryCollector
from phasegate.testing import Script
from phasegate.testing.pytest_plugin import ScriptedServerFactory

pytestmark = pytest.mark.cli

PROMPT = "Replace old with new in notes.md."
WORKFLOW_SCRIPT = (
    "export const meta = {name: 'notes', description: 'one agent', "
    "phases: [{title: 'Edit'}]}\n"
    "phase('Edit')\n"
    f"const said = await agent('{PROMPT}', {{label: 'edit notes', phase: 'Edit'}})\n"
    "return said\n"
)
EDIT: dict[str, Any] = {"Edit": {"file_path": "notes.md", "old_string": "old", "new_string": "new"}}


def _script(*replies: dict[str, Any]) -> Script:
    return Script.model_validate({"replies": list(replies)})


def test_a_workflow_agent_s_conversation_gets_its_own_replies_and_edits_the_file(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """The main agent's Workflow call comes back at once ("launched in background"); the
    workflow agent, told apart by the harness's first message and its prompt, edits
    notes.md with the replies labelled for it; the script's result then comes to the main
    conversation as a new turn (a ``<task-notification>``, in a reminder: no text of its
    own), which ends it. Nothing is unmatched."""
    (tmp_path / "notes.md").write_text("old\n")
    server = scripted_model_server(
        _script(
            {"tools": [{"Workflow": {"script": WORKFLOW_SCRIPT}}]},
            {"when": "tool_result", "contains": "launched in background", "text": "Waiting."},
            {"workflow": "edit notes", "when": "start", "contains": PROMPT, "tools": [EDIT]},
            {"workflow": "edit notes", "when": "tool_result", "text": "Edited notes.md."},
            {"when": "user", "text": "The workflow edited notes.md."},
        )
    )
    agent = server.claude_agent(timeout=90, request_timeout=20, allowed_tools=["Workflow"])

    asyncio.run(agent.run(AgentRequest(prompt="Run the workflow.", workdir=tmp_path),
                          EntryCollector()))  # fmt: skip

    assert (tmp_path / "notes.md").read_text() == "new\n"
    assert server.unmatched == [] and server.exhausted
    worked = server.workflow_requests("edit notes")
    assert [(r.last, r.reply and r.reply.workflow) for r in worked] == [
        ("start", "edit notes"), ("tool_result", "edit notes")
    ]  # fmt: skip
    assert worked[0].last_text.startswith("[Workflow harness — computed task]")
    assert server.workflow_requests() == worked and not any(r.main for r in worked)
    assert [r.last for r in server.main_requests()] == ["start", "tool_result", "user"]


def test_a_workflow_agent_the_script_has_no_reply_for_is_unmatched_by_label(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """Loudly, not with the main conversation's next reply: its request is unmatched, named
    by the label of its agent() call, and the file is left as it was."""
    (tmp_path / "notes.md").write_text("old\n")
    server = scripted_model_server(
        _script(
            {"tools": [{"Workflow": {"script": WORKFLOW_SCRIPT}}]},
            {"when": "tool_result", "text": "Waiting."},
            {"when": "user", "text": "Done."},
        )
    )
    agent = server.claude_agent(timeout=90, request_timeout=20, allowed_tools=["Workflow"])

    asyncio.run(agent.run(AgentRequest(prompt="Run the workflow.", workdir=tmp_path),
                          EntryCollector()))  # fmt: skip

    (unmatched,) = server.unmatched
    assert (unmatched.workflow, unmatched.reply) == ("edit notes", 0)
    assert "workflow agent 'edit notes'" in unmatched.describe()
    assert (tmp_path / "notes.md").read_text() == "old\n"


def test_agents_run_in_parallel_each_get_the_replies_of_their_own_label(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """Two agent() calls under parallel(), one with a prompt of two lines: whatever order
    their requests come in, each conversation takes the replies written for its label, and
    the script's result (both answers) reaches the main conversation."""
    (tmp_path / "a.md").write_text("old\n")
    (tmp_path / "b.md").write_text("old\n")
    script = (
        "export const meta = {name: 'two', description: 'two agents', phases: [{title: 'E'}]}\n"
        "phase('E')\n"
        "const both = await parallel([\n"
        "  () => agent('Edit a.md.', {label: 'a', phase: 'E'}),\n"
        "  () => agent(`Edit b.md.\\nThen say so.`, {phase: 'E', label: 'b'}),\n"
        "])\n"
        "return both\n"
    )

    def edit(name: str) -> dict[str, Any]:
        return {"Edit": {"file_path": name, "old_string": "old", "new_string": name}}

    server = scripted_model_server(
        _script(
            {"tools": [{"Workflow": {"script": script}}]},
            {"when": "tool_result", "text": "Waiting."},
            {"workflow": "b", "when": "start", "tools": [edit("b.md")]},
            {"workflow": "a", "when": "start", "tools": [edit("a.md")]},
            {"workflow": "a", "when": "tool_result", "text": "a done"},
            {"workflow": "b", "when": "tool_result", "text": "b done"},
            {"when": "user", "text": "Both done."},
        )
    )
    agent = server.claude_agent(timeout=90, request_timeout=20, allowed_tools=["Workflow"])

    asyncio.run(agent.run(AgentRequest(prompt="Run the workflow.", workdir=tmp_path),
                          EntryCollector()))  # fmt: skip

    assert [(tmp_path / n).read_text() for n in ("a.md", "b.md")] == ["a.md\n", "b.md\n"]
    assert server.unmatched == [] and server.exhausted
    for label in ("a", "b"):
        assert [r.last for r in server.workflow_requests(label)] == ["start", "tool_result"]
    assert len(server.workflow_requests()) == 4


def test_an_agent_whose_prompt_is_computed_is_named_by_its_task_text(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """A template with ${...} cannot be read back from the script: its label is unknown, so
    the agent's conversation is named by the text the harness gave it."""
    (tmp_path / "notes.md").write_text("old\n")
    script = (
        "export const meta = {name: 'computed', description: 'one agent', phases: []}\n"
        "const file = 'notes.md'\n"
        "return await agent(`Replace old with new in ${file}.`, {label: 'edit notes'})\n"
    )
    server = scripted_model_server(
        _script(
            {"tools": [{"Workflow": {"script": script}}]},
            {"when": "tool_result", "text": "Waiting."},
            {"workflow": PROMPT, "tools": [EDIT]},
            {"workflow": PROMPT, "text": "Edited."},
            {"when": "user", "text": "Done."},
        )
    )
    agent = server.claude_agent(timeout=90, request_timeout=20, allowed_tools=["Workflow"])

    asyncio.run(agent.run(AgentRequest(prompt="Run the workflow.", workdir=tmp_path),
                          EntryCollector()))  # fmt: skip

    assert (tmp_path / "notes.md").read_text() == "new\n"
    assert server.unmatched == [] and len(server.workflow_requests(PROMPT)) == 2
