"""The options one Claude Code session starts with, as the agent's SDK receives them."""

from __future__ import annotations

from pathlib import Path

import claude_agent_sdk

from phasegate.agents.claude.options import (
    SessionOptions,
    cli_env,
    completion_tool_server,
    query_options,
)
from phasegate.agents.claude.sandbox import sandbox_env
from phasegate.agents.protocol import AgentRequest, Confinement
from phasegate.phases.loading import load_task
from phasegate.phases.model import READ_ONLY_TOOLSET, Task
from phasegate.prompts.completion_tools import completion_tools
from phasegate.prompts.templates import PromptTemplates
from phasegate.tasks.request import first_request
from tests.helpers.scenarios import EXAMPLE

SETTINGS = SessionOptions(model=None, cli_path=None, permission_mode="acceptEdits", env={},
                          isolated=True, max_turns=None, max_budget_usd=None)  # fmt: skip


def options_for(request: AgentRequest) -> claude_agent_sdk.ClaudeAgentOptions:
    chosen: claude_agent_sdk.ClaudeAgentOptions = query_options(
        claude_agent_sdk, SETTINGS, request, hooks={}, mcp_servers={}, stderr=lambda _: None
    )
    return chosen


def test_a_read_only_task_gets_the_reading_tools_in_plan_mode(tmp_path: Path) -> None:
    """Plan mode makes the CLI itself refuse writes and commands; the tools offered read."""
    task = Task.model_validate(
        {"name": "look", "read_only": True, "phases": [{"name": "a", "instructions": "Look."}]}
    )
    request = first_request(task, "gate", PromptTemplates(), tmp_path, max_attempts=3)
    chosen = options_for(request)
    assert chosen.permission_mode == "plan"
    assert chosen.tools == ["Read", "Grep", "Glob"] == list(READ_ONLY_TOOLSET)


def test_a_tasks_toolset_is_the_tools_claude_code_is_offered(tmp_path: Path) -> None:
    """``toolset`` goes to the CLI as its tools; the completion tools come besides."""
    task = Task.model_validate(
        {
            "name": "fix",
            "toolset": ["Read", "Edit"],
            "phases": [{"name": "a", "instructions": "Fix.", "require_tools": ["Edit"]}],
        }
    )
    request = first_request(task, "gate", PromptTemplates(), tmp_path, max_attempts=3)
    chosen = options_for(request)
    assert chosen.tools == ["Read", "Edit"]
    assert chosen.permission_mode == "acceptEdits"
    assert chosen.allowed_tools  # phase_complete and submit_summary, by their full names


def test_an_ordinary_request_keeps_the_agent_s_mode_and_every_tool(tmp_path: Path) -> None:
    chosen = options_for(AgentRequest(prompt="work", workdir=tmp_path))
    assert chosen.permission_mode == "acceptEdits"
    assert chosen.tools is None


def test_the_completion_tools_server_is_loaded_up_front_and_keeps_its_instance() -> None:
    """``alwaysLoad`` exempts this server from tool search; the SDK strips the instance."""
    server = claude_agent_sdk.create_sdk_mcp_server("phasegate", tools=[])
    marked = completion_tool_server(server)
    assert marked == {**server, "alwaysLoad": True}
    assert marked["instance"] is server["instance"]


def test_offering_completion_tools_leaves_tool_search_as_the_caller_has_it(
    tmp_path: Path,
) -> None:
    """Turning tool search off would send Claude Code's deferred tools with every request."""
    tools = completion_tools(load_task(EXAMPLE / "task.yaml"))
    request = AgentRequest(prompt="work", workdir=tmp_path, tools=tools)
    assert tools
    assert "ENABLE_TOOL_SEARCH" not in cli_env({}, request, api_retries=0, request_timeout=1)
    own = cli_env({"ENABLE_TOOL_SEARCH": "false"}, request, api_retries=0, request_timeout=1)
    assert own["ENABLE_TOOL_SEARCH"] == "false"


def test_a_confined_request_turns_on_the_cli_sandbox_with_no_way_out(tmp_path: Path) -> None:
    """Commands confined, never unsandboxed, allowed without asking; a sandbox that fails to
    start fails the command; only the listed hosts; what protect matches now is read-only."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("")
    (tmp_path / "poetry.lock").write_text("")
    (tmp_path / "app.py").write_text("")
    confinement = Confinement(network=("pypi.org",), read_only=("tests/**", "poetry.lock"))
    chosen = options_for(AgentRequest(prompt="w", workdir=tmp_path, confinement=confinement))
    root = tmp_path.resolve()
    assert chosen.sandbox == {
        "enabled": True,
        "failIfUnavailable": True,
        "allowUnsandboxedCommands": False,
        "autoAllowBashIfSandboxed": True,
        "network": {"allowedDomains": ["pypi.org"]},
        "filesystem": {"denyWrite": [str(root / "tests"), str(root / "poetry.lock")]},
    }


def test_phasegates_own_files_in_the_work_directory_are_read_only_when_they_exist(
    tmp_path: Path,
) -> None:
    """Its event log and state folder: a missing one is left out (the CLI would keep it
    from being made, by phasegate too)."""
    (tmp_path / "events.jsonl").write_text("")
    own = (tmp_path / "events.jsonl", tmp_path / ".phasegate")
    confinement = Confinement(own=own)
    chosen = options_for(AgentRequest(prompt="w", workdir=tmp_path, confinement=confinement))
    settings = dict(chosen.sandbox or {})
    assert settings["filesystem"] == {"denyWrite": [str(tmp_path.resolve() / "events.jsonl")]}


def test_an_unconfined_request_leaves_the_cli_sandbox_alone(tmp_path: Path) -> None:
    assert options_for(AgentRequest(prompt="w", workdir=tmp_path)).sandbox is None


def test_a_confined_task_has_its_file_tools_checked_in_every_mode(tmp_path: Path) -> None:
    """Checked before they run (the PreToolUse hook), so that one outside the work directory
    is refused: in the unstructured baseline too, which has no phase policy."""
    phases = [{"name": "a", "instructions": "Fix."}]
    confined = Task.model_validate({"name": "t", "phases": phases, "sandbox": "on"})
    free = Task.model_validate({"name": "t", "phases": phases})
    for mode in ("gate", "single-query", "unstructured"):
        request = first_request(confined, mode, PromptTemplates(), tmp_path, max_attempts=3)
        assert set(request.check_before) >= {"Edit", "MultiEdit", "Write", "NotebookEdit"}
        assert (
            first_request(free, mode, PromptTemplates(), tmp_path, max_attempts=3).check_before
            == ()
        )


def test_a_confined_cli_gets_a_temporary_folder_its_proxy_sockets_fit_in(tmp_path: Path) -> None:
    """Claude Code puts the sandbox proxy's Unix sockets in its temporary folder: under one
    too long for them (CI's 100 characters) the sandbox cannot start, so a short one is
    given instead; a short one is left as it is."""
    long = tmp_path / ("x" * max(1, 100 - len(str(tmp_path))))
    long.mkdir()
    request = AgentRequest(prompt="w", workdir=tmp_path, confinement=Confinement())
    settings = SessionOptions(model=None, cli_path=None, permission_mode="acceptEdits",
                              env={"TMPDIR": str(long)}, isolated=True, max_turns=None,
                              max_budget_usd=None)  # fmt: skip
    chosen = query_options(claude_agent_sdk, settings, request, hooks={}, mcp_servers={},
                           stderr=lambda _: None)  # fmt: skip
    assert chosen.env["TMPDIR"] == "/tmp"
    assert sandbox_env({"TMPDIR": "/tmp"}) == {}
    free = AgentRequest(prompt="w", workdir=tmp_path)
    unconfined = query_options(claude_agent_sdk, settings, free, hooks={}, mcp_servers={},
                               stderr=lambda _: None)  # fmt: skip
    assert unconfined.env["TMPDIR"] == str(long)


def test_a_fork_resumes_the_session_into_a_new_one(tmp_path: Path) -> None:
    """``fork`` reaches the SDK as ``fork_session``, and only with a session to resume."""
    forked = options_for(AgentRequest(prompt="go", workdir=tmp_path, resume="s1", fork=True))
    assert (forked.resume, forked.fork_session) == ("s1", True)
    alone = options_for(AgentRequest(prompt="go", workdir=tmp_path, fork=True))
    assert (alone.resume, alone.fork_session) == (None, False)
    resumed = options_for(AgentRequest(prompt="go", workdir=tmp_path, resume="s1"))
    assert resumed.fork_session is False


def test_the_agent_s_allowed_tools_join_the_completion_tools_and_skip_the_grader(
    tmp_path: Path,
) -> None:
    """``ClaudeAgent(allowed_tools=["Workflow"])`` reaches the SDK's ``allowed_tools`` after
    the request's completion tools; the grader it runs is not given them."""
    from phasegate.agents.claude.adapter import ClaudeAgent
    from phasegate.phases.grader import GraderSettings

    agent = ClaudeAgent(allowed_tools=["Workflow"])
    task = Task.model_validate({"name": "fix", "phases": [{"name": "a", "instructions": "Fix."}]})
    request = first_request(task, "gate", PromptTemplates(), tmp_path, max_attempts=3)
    chosen = query_options(
        claude_agent_sdk, agent._session_options({}), request, hooks={}, mcp_servers={},
        stderr=lambda _: None,
    )  # fmt: skip

    assert chosen.allowed_tools[-1] == "Workflow" and len(chosen.allowed_tools) > 1
    assert agent.grading_agent(GraderSettings()).allowed_tools == ()
