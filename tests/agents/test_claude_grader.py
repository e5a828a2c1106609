"""The agent a grader runs: derived from the run's own agent, and, with Claude Code, what the
real CLI sends the model for a grader's session (through the scripted model server)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from phasegate.agents.claude.adapter import ClaudeAgent
from phasegate.agents.protocol import AgentObserver, AgentRequest, EntryCollector, grading_agent
from phasegate.evidence.transcript import RunResult, ToolCall, ToolResult
from phasegate.phases.checks import Rubric
from phasegate.phases.completion import STRUCTURED_OUTPUT_TOOL
from phasegate.phases.grader import DEFAULT_GRADER_MODEL, GraderSettings
from phasegate.prompts.grader import GRADER_OPENING
from phasegate.testing import Script, ScriptedAgent
from phasegate.testing.pytest_plugin import ScriptedServerFactory
from phasegate.validators.grading import verdict_schema

GRADER_TOOLSET = ("Read", "Grep", "Glob")
RUBRIC = Rubric.model_validate({"criteria": "NOTES.md says how to run the tests."})
VERDICT = {"verdicts": [{"id": "c1", "verdict": "met", "reason": "NOTES.md: 'Run make test.'"}]}


class _NoAgent:
    """An agent whose ``grading_agent`` gives something that is not an agent."""

    name = "odd"

    async def run(self, request: AgentRequest, observer: AgentObserver) -> None:
        raise AssertionError("never run")

    def grading_agent(self, settings: GraderSettings) -> str:
        return "not an agent"


def test_claude_code_s_grader_shares_the_connection_with_the_grader_s_own_bounds(
    tmp_path: Path,
) -> None:
    """The CLI, its environment, timeouts and API retries are the run's; the model, turns
    and cost cap are the grader's; the user's settings and the run's plugins stay out."""
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    run_agent = ClaudeAgent(
        model="opus", cli_path=tmp_path / "claude", env={"ANTHROPIC_BASE_URL": "http://x"},
        timeout=50, request_timeout=10, api_retries=1, isolated=False, max_turns=40,
        max_budget_usd=9.0, plugins=[plugin],
    )  # fmt: skip

    grader = grading_agent(run_agent, GraderSettings(max_turns=4))

    assert isinstance(grader, ClaudeAgent) and grader is not run_agent
    assert (grader.cli_path, grader.env, grader.timeout, grader.request_timeout) == (
        tmp_path / "claude", {"ANTHROPIC_BASE_URL": "http://x"}, 50, 10
    )  # fmt: skip
    assert (grader.api_retries, grader.isolated, grader.plugins) == (1, True, ())
    assert grader.permission_mode == "dontAsk"
    assert (grader.model, grader.max_turns, grader.max_budget_usd) == (
        DEFAULT_GRADER_MODEL, 4, GraderSettings().resolved_cost
    )  # fmt: skip


def test_an_agent_without_a_grading_agent_has_no_grader() -> None:
    """None, from an agent with no such method or one that gives no agent."""

    class _Plain:
        name = "plain"

        async def run(self, request: AgentRequest, observer: AgentObserver) -> None:
            raise AssertionError("never run")

    assert grading_agent(_Plain(), GraderSettings()) is None
    assert grading_agent(_NoAgent(), GraderSettings()) is None
    script = Script.model_validate({"replies": [{"text": "hi"}]})
    assert isinstance(grading_agent(ScriptedAgent(script), GraderSettings()), ScriptedAgent)


@pytest.mark.cli
def test_claude_code_runs_a_grader_with_reading_tools_and_structured_output(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """The real CLI, as a grader: its requests reach the server as the grader's (the main
    reply written first is passed over), for the grader's default model, offering Read,
    Grep, Glob and StructuredOutput and no tool that writes or runs; the verdict comes back
    as the StructuredOutput call's input."""
    (tmp_path / "NOTES.md").write_text("# Notes\nRun make test.\n")
    script = Script.model_validate(
        {
            "replies": [
                {"text": "the main conversation's reply"},
                {"grader": True, "tools": [{"Read": {"file_path": "NOTES.md"}}]},
                {
                    "grader": True,
                    "when": "tool_result",
                    "tools": [{STRUCTURED_OUTPUT_TOOL: VERDICT}],
                },
            ]
        }
    )
    server = scripted_model_server(script)
    grader = grading_agent(server.claude_agent(timeout=90, request_timeout=20), GraderSettings())
    assert grader is not None
    request = AgentRequest(
        prompt=f"{GRADER_OPENING} Judge whether NOTES.md says how to run the tests.",
        workdir=tmp_path,
        toolset=GRADER_TOOLSET,
        output_schema=verdict_schema(RUBRIC),
    )
    collector = EntryCollector()

    asyncio.run(grader.run(request, collector))

    graded = server.grader_requests()
    # One request per reply: after a valid StructuredOutput the CLI asks nothing more, so
    # the next grader session starts at the next grader reply.
    assert [r.reply for r in graded] == list(script.replies[1:])
    assert server.main_requests() == [] and server.unmatched == []
    first = graded[0].body or {}
    callable_tools = sorted(t["name"] for t in first["tools"] if not t.get("defer_loading"))
    assert callable_tools == sorted([*GRADER_TOOLSET, STRUCTURED_OUTPUT_TOOL])
    offered = {tool["name"] for tool in first["tools"]}
    assert not {"Write", "Edit", "MultiEdit", "NotebookEdit", "Bash", "Agent"} & offered, offered
    # The CLI sends the alias resolved to a full model id (claude-haiku-5-5 on 2.1.332).
    assert DEFAULT_GRADER_MODEL in first["model"], first["model"]
    calls = [e for e in collector.entries if isinstance(e, ToolCall)]
    assert [c.name for c in calls] == ["Read", STRUCTURED_OUTPUT_TOOL]
    assert calls[1].input == VERDICT
    (result,) = [e for e in collector.entries if isinstance(e, RunResult)]
    assert not result.is_error, result


@pytest.mark.cli
def test_claude_code_s_grader_cannot_read_outside_the_work_directory(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """A grader's Read of a file beside the work directory comes back refused, its text
    never sent to the model."""
    work = tmp_path / "work"
    work.mkdir()
    outside = tmp_path / "secret.txt"
    outside.write_text("the secret beside the project\n")
    script = Script.model_validate(
        {
            "replies": [
                {"grader": True, "tools": [{"Read": {"file_path": str(tmp_path / "secret.txt")}}]},
                {
                    "grader": True,
                    "when": "tool_error",
                    "tools": [{STRUCTURED_OUTPUT_TOOL: VERDICT}],
                },
            ]
        }
    )
    server = scripted_model_server(script)
    grader = grading_agent(server.claude_agent(timeout=90, request_timeout=20), GraderSettings())
    assert grader is not None
    request = AgentRequest(
        prompt=f"{GRADER_OPENING} Judge it.",
        workdir=work,
        toolset=GRADER_TOOLSET,
        output_schema=verdict_schema(RUBRIC),
    )
    collector = EntryCollector()

    asyncio.run(grader.run(request, collector))

    assert server.unmatched == [] and server.exhausted
    sent = "".join(str(r.body) for r in server.grader_requests())
    assert "the secret beside the project" not in sent
    results = [e for e in collector.entries if isinstance(e, ToolResult)]
    assert results and not results[0].ok
