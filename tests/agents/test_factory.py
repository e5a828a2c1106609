"""Settings to an agent (agents.factory): one place builds the agent of every entry point."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from phasegate.agents.claude.adapter import ClaudeAgent
from phasegate.agents.factory import AgentSpec, build_agent
from phasegate.errors import UsageError
from phasegate.testing import ScriptedAgent
from tests.helpers.scenarios import EXAMPLE

MODEL_SCRIPT = EXAMPLE / "model.yaml"


def test_claude_code_gets_the_model_the_time_limit_and_the_cost_cap() -> None:
    """Every setting reaches the adapter; none is dropped on the way."""
    spec = AgentSpec(model="sonnet", timeout=90, max_cost=0.5, cli_path="/opt/claude")
    with contextlib.ExitStack() as stack:
        built = build_agent(spec, stack)
    assert isinstance(built.agent, ClaudeAgent)
    assert (built.agent.model, built.agent.timeout, built.agent.max_budget_usd) == (
        "sonnet", 90, 0.5,
    )  # fmt: skip
    assert built.model_requests is None and built.unmatched() == []


def test_a_model_script_keeps_the_cost_cap_and_counts_the_requests_it_answered() -> None:
    """Offline, the real CLI talks to a scripted model server; the cap still holds (it was
    dropped on the command line's path before there was one factory)."""
    spec = AgentSpec(model_script=MODEL_SCRIPT, max_cost=0.000001, timeout=60)
    with contextlib.ExitStack() as stack:
        built = build_agent(spec, stack)
        assert isinstance(built.agent, ClaudeAgent)
        assert built.agent.max_budget_usd == 0.000001
        assert built.agent.timeout == 60
        assert built.model_requests is not None and built.model_requests() == 0
        assert "ANTHROPIC_BASE_URL" in (built.agent.env or {})


def test_the_scripted_agent_replays_its_script_in_process() -> None:
    """kind scripted: no CLI, no server; continue_script carries over."""
    spec = AgentSpec(kind="scripted", script=MODEL_SCRIPT, continue_script=True)
    with contextlib.ExitStack() as stack:
        built = build_agent(spec, stack)
    assert isinstance(built.agent, ScriptedAgent)
    assert built.agent.continue_script
    assert built.unmatched() == []


@pytest.mark.parametrize(
    ("spec", "option"),
    [
        (AgentSpec(kind="scripted"), "script"),
        (
            AgentSpec(kind="scripted", script=MODEL_SCRIPT, model_script=MODEL_SCRIPT),
            "model_script",
        ),
        (AgentSpec(script=MODEL_SCRIPT), "script"),
    ],
)
def test_settings_that_contradict_each_other_are_refused_naming_the_setting(
    spec: AgentSpec, option: str
) -> None:
    """A library error says what to do in words and names the keyword, never a flag."""
    with pytest.raises(UsageError) as caught, contextlib.ExitStack() as stack:
        build_agent(spec, stack)
    assert caught.value.option == option
    assert "--" not in str(caught.value)


def test_a_missing_script_is_refused_naming_the_file(tmp_path: Path) -> None:
    """A script that cannot be read says which file, before anything starts."""
    with pytest.raises(UsageError, match=r"missing\.yaml"), contextlib.ExitStack() as stack:
        build_agent(AgentSpec(kind="scripted", script=tmp_path / "missing.yaml"), stack)
