"""ClaudeAgent through the real Claude Code CLI and the scripted model server: failures,
retries, timeouts and what the model was really sent."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from phasegate import RunEvent, Runner, Task, UsageError
from phasegate.agents.claude.adapter import ClaudeAgent
from phasegate.agents.retry import RetryPolicy
from phasegate.evidence.transcript import SessionStart, UserText
from phasegate.phases.completion import COMPLETION_TOOLS
from phasegate.testing import HttpFault, Script, ScriptedModelServer, load_script
from phasegate.testing.pytest_plugin import ScriptedServerFactory
from tests.helpers.scenarios import EDIT, EXAMPLE, GOOD_JSON, MARKER, NO_RETRIES
from tests.helpers.usage import assert_usage_adds_up, sent_usage

pytestmark = pytest.mark.cli

GOOD_RUN: list[dict[str, Any]] = [{"tools": [EDIT]}, {"text": f"{MARKER}\n{GOOD_JSON}"}]


def _script(replies: list[dict[str, Any]]) -> Script:
    return Script.model_validate({"replies": replies})


def _agent(server: ScriptedModelServer, **options: Any) -> ClaudeAgent:
    """Claude Code against ``server``: no CLI retries, short timeouts, unless ``options`` say."""
    return server.claude_agent(**({"request_timeout": 20, "timeout": 90} | options))


def _phasegate_run(
    server: ScriptedModelServer, tmp_path: Path, *options: str
) -> subprocess.CompletedProcess[str]:
    """``phasegate run`` of the example task in a copy of its project, against ``server``."""
    work = tmp_path / "work"
    shutil.copytree(EXAMPLE / "project", work)
    return subprocess.run(
        [sys.executable, "-m", "phasegate", "run", str(EXAMPLE / "task.yaml"), "-w", str(work),
         *options],
        env={**os.environ, **server.env()},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )  # fmt: skip


def test_a_529_retried_by_the_cli_itself_ends_accepted_with_a_retry_event(
    task: Task, project: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """Overloaded once: the CLI's own retry absorbs it; phasegate reports the retry."""
    server = scripted_model_server(_script([{"error": {"status": 529}}, *GOOD_RUN]))
    events: list[RunEvent] = []
    agent = _agent(server, api_retries=1)
    report = Runner(agent, on_event=events.append, retry=NO_RETRIES).run_sync(task, project)
    assert report.verdict == "accepted"
    assert (report.api_retries, report.retries) == (1, 0)
    (retry,) = [e.fields for e in events if e.event == "retry.scheduled"]
    assert retry["source"] == "claude-code" and "529" in retry["reason"]


def test_a_persistent_500_ends_in_verdict_error_after_bounded_retries(
    task: Task, project: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """Every request fails: a bounded number of sessions, then an error report, no gate check."""
    server = scripted_model_server(_script(GOOD_RUN))
    server.fail_all = HttpFault(status=500)
    policy = RetryPolicy(session_retries=1, initial_delay=0.01, max_delay=0.05)
    report = Runner(_agent(server), retry=policy).run_sync(task, project)
    assert report.verdict == "error" and report.exit_code == 3
    assert report.retries == 1
    assert report.error is not None and "HTTP 500" in report.error
    assert report.attempts == 0  # an API failure is never judged as the model's work
    assert len(server.main_requests()) == 2  # one per session, nothing more


@pytest.mark.parametrize(
    ("session_timeout", "request_timeout", "run_timeout", "expected"),
    [
        pytest.param(3, 60, None, "3 s (the agent's timeout)", id="the session's own timeout"),
        pytest.param(60, 1, None, "no answer", id="the CLI's per-request timeout"),
        pytest.param(60, 60, 3, "its timeout of 3 s", id="the run's deadline"),
    ],
)
def test_a_hanging_model_ends_in_an_error_at_the_first_timeout_that_fires(
    task: Task,
    project: Path,
    scripted_model_server: ScriptedServerFactory,
    session_timeout: float,
    request_timeout: float,
    run_timeout: float | None,
    expected: str,
) -> None:
    """A model that never answers: whichever bound fires first ends the run, with its reason."""
    server = scripted_model_server(_script([{"hang": True}]))
    agent = _agent(server, request_timeout=request_timeout, timeout=session_timeout)
    report = Runner(agent, retry=NO_RETRIES, timeout=run_timeout).run_sync(task, project)
    assert report.verdict == "error"
    assert report.error is not None and expected in report.error


def test_a_cost_cap_stops_the_run_as_an_error_that_names_the_cap(
    task: Task, project: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """max_budget_usd ends the session once spent: verdict error, not retried, not judged."""
    server = scripted_model_server(load_script(EXAMPLE / "model.yaml"))
    report = Runner(_agent(server, max_budget_usd=0.0001)).run_sync(task, project)
    assert report.verdict == "error" and report.retries == 0 and report.attempts == 0
    assert report.error is not None and "cost cap was reached" in report.error


def test_a_missing_cli_binary_is_a_usage_error_that_says_what_to_do(
    task: Task, project: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """A wrong ``cli_path`` fails before any work, naming the setting that fixes it."""
    server = scripted_model_server(_script(GOOD_RUN))
    agent = _agent(server, cli_path=project / "no-such-claude")
    with pytest.raises(UsageError, match="Claude Code CLI was not found") as raised:
        Runner(agent).run_sync(task, project)
    assert raised.value.option == "cli_path"


def test_the_feedback_the_gate_produced_is_what_the_model_received_next(
    task: Task, project: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """The Stop hook delivers the gate's feedback word for word, in the same session."""
    server = scripted_model_server(load_script(EXAMPLE / "model.yaml"))
    report = Runner(_agent(server)).run_sync(task, project)
    assert (report.verdict, report.attempts) == ("accepted", 2)
    assert report.transcript is not None
    sent = [e.text for e in report.transcript.entries if isinstance(e, UserText)]
    received = server.user_texts()
    assert len(sent) == len(received) == 2
    assert received[0] == sent[0].strip()
    assert received[1] == f"Stop hook feedback:\n{sent[1]}".strip()
    assert '"claimed_not_changed"' in received[1]
    sessions = {e.session_id for e in report.transcript.entries if isinstance(e, SessionStart)}
    assert len(sessions) == 1  # feedback went into the same session


def _tools_sent(server: ScriptedModelServer) -> list[dict[str, dict[str, Any]]]:
    """Each main request's tool definitions, by name."""
    return [
        {tool["name"]: tool for tool in (request.body or {})["tools"]}
        for request in server.main_requests()
    ]


def test_the_completion_tools_are_sent_up_front_and_nothing_else_is_added(
    task: Task, project: Path, tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """A model that calls phase_complete and submit_summary without searching is accepted;
    every request carries both tools with their schemas, and otherwise exactly the tools a
    run without them gets: Claude Code's tool search stays on for its own deferred tools."""
    calls = scripted_model_server(_script([
        {"tools": [EDIT]},
        {"when": "tool_result", "tools": [{"phase_complete": {"phase": 1, "note": "fixed"}}]},
        {"when": "tool_result", "tools": [{"submit_summary": {"summary": {
            "files_changed": ["app.py"], "description": "Replaced eval with float."}}}]},
        {"when": "tool_result", "text": "Done."},
    ]))  # fmt: skip
    report = Runner(_agent(calls)).run_sync(task.model_copy(update={"completion": "tool"}), project)
    assert report.verdict == "accepted", report.issues
    assert [phase.completed_by for phase in report.phases] == ["tool", "submit_summary"]

    markers = scripted_model_server(_script(GOOD_RUN))
    marker_project = tmp_path / "marker-project"
    shutil.copytree(EXAMPLE / "project", marker_project)
    marker_task = task.model_copy(update={"completion": "marker"})
    assert Runner(_agent(markers)).run_sync(marker_task, marker_project).verdict == "accepted"

    (without,) = {frozenset(tools) for tools in _tools_sent(markers)}
    assert "ToolSearch" in without  # tool search is on: the CLI's rarely used tools wait there
    for tools in _tools_sent(calls):
        assert set(tools) == without | COMPLETION_TOOLS
        for name in COMPLETION_TOOLS:
            assert tools[name]["input_schema"]["properties"]
            assert not tools[name].get("defer_loading")


def test_tokens_and_cost_are_reported_per_phase_and_add_up_to_the_run(
    task: Task, project: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """Each phase gets the final tokens of its responses and its share of the run's cost;
    the phases' tokens are exactly what the model server sent."""
    server = scripted_model_server(load_script(EXAMPLE / "model.yaml"))
    report = Runner(_agent(server)).run_sync(task, project)
    sent = sent_usage(server)
    phases = [phase.usage for phase in report.phases]
    assert sum(u.output_tokens for u in phases) == sent.output_tokens > len(server.requests)
    assert sum(u.input_tokens for u in phases) == sent.input_tokens > 0
    assert report.usage_exact
    assert report.usage.cost_usd is not None and report.usage.cost_usd > 0
    assert_usage_adds_up(report.model_dump(mode="json"))


def test_phasegate_run_uses_claude_code_and_honours_anthropic_base_url(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """The CLI's default agent talks to ANTHROPIC_BASE_URL with ANTHROPIC_API_KEY."""
    server = scripted_model_server(load_script(EXAMPLE / "model.yaml"))
    done = _phasegate_run(server, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "agent claude" in done.stderr
    assert done.stdout.startswith("fix-vulnerability: ACCEPTED (gate, 2 gate check(s))")


def test_phasegate_run_exits_three_when_the_api_stays_down(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """Infrastructure failure after retries: exit code 3 and the reason on stderr."""
    server = scripted_model_server(_script(GOOD_RUN))
    server.fail_all = HttpFault(status=503)
    done = _phasegate_run(server, tmp_path, "--retries", "0", "--timeout", "60")
    assert done.returncode == 3, done.stderr
    assert "error: the model API failed: HTTP 503" in done.stdout


def test_a_tasks_toolset_is_all_claude_code_offers_the_model(
    task: Task, project: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """Offered Read and Edit only: the request carries those two and the completion tools,
    and a Bash call the model makes anyway is refused by the CLI as no such tool."""
    bash = {"Bash": {"command": "echo hi"}}
    server = scripted_model_server(
        _script([{"tools": [bash]}, {"when": "tool_error", "tools": [EDIT]}, *GOOD_RUN[1:]])
    )
    narrow = task.model_copy(update={"toolset": ("Read", "Edit")})
    report = Runner(_agent(server)).run_sync(narrow, project)
    offered = {tool["name"] for tool in server.main_requests()[0].body["tools"]}  # type: ignore[index]
    assert {"Read", "Edit"} <= offered
    assert not offered & {"Bash", "Write", "Grep", "WebFetch"}
    # With tool search on, the CLI adds its own placeholder for the tools it defers.
    ours = {"Read", "Edit", "DeferredToolPlaceholder"}
    assert all(name in ours or name.startswith("mcp__") for name in offered), offered
    assert report.verdict == "accepted", report.issues
    assert report.phases[0].tool_errors == 1  # the Bash call: no such tool
