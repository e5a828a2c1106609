"""One run, one session: the Stop-hook block cap of Claude Code is raised to the run's budget.

Claude Code ends a turn after 9 Stop-hook blocks in a row (``CLAUDE_CODE_STOP_HOOK_BLOCK_CAP``
raises it). A pipeline hands every stage over through a block, so before phasegate raised the
cap a pipeline of more than 9 text-only stages silently needed a second session.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from phasegate import AgentObserver, AgentRequest, Pipeline, PipelineRunner, RunEvent
from phasegate.agents.claude.adapter import ClaudeAgent
from phasegate.agents.claude.options import BLOCK_CAP_VAR, cli_env
from phasegate.testing import Script, ScriptedModelServer

STAGES = 12


def _said_stages(count: int) -> tuple[Pipeline, Script]:
    """``count`` stages that only need the model to say something, and a model that does."""
    pipeline = Pipeline.model_validate(
        {
            "name": "many",
            "stages": [
                {"name": f"s{n}", "prompt": f"Say step {n}.", "exit_when": [{"said": f"STEP {n}"}]}
                for n in range(1, count + 1)
            ],
        }
    )
    replies: list[dict[str, Any]] = [
        {"contains": f"Stage {n} of {count}:", "text": f"Done.\n\n<promise>STEP {n}</promise>"}
        for n in range(1, count + 1)
    ]
    return pipeline, Script.model_validate({"replies": replies})


class _CliDefaultCap:
    """Claude Code left at its own cap, as phasegate ran it before raising the cap."""

    name = "claude"

    def __init__(self, agent: ClaudeAgent) -> None:
        self.agent = agent

    async def run(self, request: AgentRequest, observer: AgentObserver) -> None:
        await self.agent.run(replace(request, stop_blocks=None), observer)


def _run(pipeline: Pipeline, script: Script, workdir: Path, *, raise_cap: bool) -> Any:
    events: list[RunEvent] = []
    with ScriptedModelServer(script) as server:
        agent = server.claude_agent()
        runner = PipelineRunner(
            agent if raise_cap else _CliDefaultCap(agent), on_event=events.append
        )
        report = asyncio.run(runner.run(pipeline, workdir))
    (completed,) = [e for e in events if e.event == "pipeline.completed"]
    return report, completed


@pytest.mark.cli
def test_twelve_text_only_stages_are_accepted_in_exactly_one_session(tmp_path: Path) -> None:
    """11 hand-overs by the Stop hook, past Claude Code's 9, and still one session."""
    pipeline, script = _said_stages(STAGES)
    report, completed = _run(pipeline, script, tmp_path, raise_cap=True)
    assert report.verdict == "accepted", report.error
    assert report.sessions == 1
    assert report.stop_overrides == 0 and completed.fields["stop_overrides"] == 0


@pytest.mark.cli
def test_a_block_the_cli_overrides_anyway_is_counted_in_the_report_and_events(
    tmp_path: Path,
) -> None:
    """At the CLI's own cap the turn ends after 9 blocks: the run recovers in a second
    session, and says so instead of hiding it."""
    pipeline, script = _said_stages(STAGES)
    report, completed = _run(pipeline, script, tmp_path, raise_cap=False)
    assert report.verdict == "accepted", report.error
    assert report.sessions == 2
    assert report.stop_overrides == 1
    assert completed.fields["stop_overrides"] == 1


def test_the_cap_is_the_runs_budget_with_slack_and_never_lowered() -> None:
    """No budget: the CLI's own cap. A budget: raised to it plus slack; a larger cap the
    caller set stays."""
    request = AgentRequest(prompt="p", workdir=Path("."))

    def cap(base: dict[str, str], stop_blocks: int | None) -> str | None:
        env = cli_env(
            base, replace(request, stop_blocks=stop_blocks), api_retries=0, request_timeout=1
        )
        return env.get(BLOCK_CAP_VAR)

    assert cap({}, None) is None
    assert cap({}, 2) == "9"  # never below the CLI's own default
    assert cap({}, 36) == "41"
    assert cap({BLOCK_CAP_VAR: "100"}, 36) == "100"
    assert cap({BLOCK_CAP_VAR: "20"}, 36) == "41"


def test_a_pipelines_check_budget_counts_retries_and_revisions() -> None:
    """Every stage's checks per visit, times the visits revisions allow (none without back_to)."""
    pipeline, _ = _said_stages(STAGES)
    assert pipeline.max_checks == STAGES * 3  # the default retry: 2 feedback rounds
    revising = Pipeline.model_validate(
        {
            "name": "r",
            "max_revisions": 2,
            "stages": [
                {"name": "a", "prompt": "a", "exit_when": [{"said": "A"}]},
                {
                    "name": "b",
                    "prompt": "b",
                    "exit_when": [{"said": "B"}],
                    "on_fail": {"retry": 0, "back_to": "a"},
                },
            ],
        }
    )
    assert revising.max_checks == 3 * (3 + 1)
