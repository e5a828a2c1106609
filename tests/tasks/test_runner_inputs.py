"""Runner.run(inputs=) and PipelineRunner.run(inputs=): values filled into the prompts
before the agent starts; a required input without a value stops the run before it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from phasegate import Runner
from phasegate.errors import InputsInvalidError
from phasegate.phases.loading import task_from_mapping
from phasegate.phases.model import Task
from phasegate.phases.pipeline import Pipeline
from phasegate.agents.protocol import AgentObserver, AgentRequest
from phasegate.pipelines.runner import PipelineRunner
from phasegate.testing import Script, ScriptedAgent
from phasegate.testing.pytest_plugin import ScriptedServerFactory

DEPLOY: dict[str, Any] = {
    "name": "deploy",
    "phases": [
        {
            "name": "write",
            "instructions": "Write deploy.txt saying {{ target }} for team {{ team }} "
            "in {{ region }}; keep ${{ secrets.TOKEN }} as it is.",
            "marker": "written",
        }
    ],
    "inputs": [
        {
            "id": "target",
            "question": "Where should it deploy?",
            "header": "Target",
            "type": "choice",
            "options": [{"label": "Fly.io"}, {"label": "AWS"}],
        },
        {"id": "team", "question": "Which team owns it?", "header": "Team"},
        {"id": "region", "question": "Which region?", "header": "Region", "default": "eu-west"},
    ],
}
REPLIES: list[dict[str, Any]] = [
    {"tools": [{"Write": {"file_path": "deploy.txt", "content": "AWS\n"}}]},
    {"when": "tool_result", "text": "PHASE 1 COMPLETE: written"},
]


class RecordingAgent:
    """A scripted agent that keeps every first prompt it is sent."""

    name = "recording"

    def __init__(self, replies: list[dict[str, Any]]) -> None:
        self.inner = ScriptedAgent(Script.model_validate({"replies": replies}))
        self.prompts: list[str] = []

    async def run(self, request: AgentRequest, observer: AgentObserver) -> None:
        """Record the prompt, then replay the script."""
        self.prompts.append(request.prompt)
        await self.inner.run(request, observer)


@pytest.fixture
def deploy() -> Task:
    """A task with a choice, a text input and a text input with a default."""
    return task_from_mapping(DEPLOY)


def test_the_model_receives_the_values_in_place_of_the_placeholders(
    deploy: Task, tmp_path: Path
) -> None:
    """Given values and the default are filled in; ${{ ... }} stays as it was."""
    agent = RecordingAgent(REPLIES)

    report = Runner(agent).run_sync(deploy, tmp_path, inputs={"target": "AWS", "team": "core"})

    assert report.verdict == "accepted"
    (prompt,) = agent.prompts
    assert "Write deploy.txt saying AWS for team core in eu-west;" in prompt
    assert "${{ secrets.TOKEN }}" in prompt
    assert "{{ target }}" not in prompt


def test_a_required_input_without_a_value_raises_before_the_agent_starts(
    deploy: Task, tmp_path: Path
) -> None:
    """No value for team and no default: InputsInvalidError, and no prompt was sent."""
    agent = RecordingAgent(REPLIES)

    with pytest.raises(InputsInvalidError) as caught:
        Runner(agent).run_sync(deploy, tmp_path, inputs={"target": "AWS"})

    assert [problem.field for problem in caught.value.errors] == ["team"]
    assert agent.prompts == []


def test_placeholder_values_and_unknown_ids_are_refused_before_the_agent_starts(
    deploy: Task, tmp_path: Path
) -> None:
    """TBD is not a value; an id the task does not declare is a mistake."""
    agent = RecordingAgent(REPLIES)
    with pytest.raises(InputsInvalidError) as caught:
        Runner(agent).run_sync(deploy, tmp_path, inputs={"target": "TBD", "team": "x", "tem": "y"})
    assert sorted(problem.field for problem in caught.value.errors) == ["target", "tem"]
    assert agent.prompts == []


def test_a_value_that_looks_like_a_placeholder_is_not_filled_again(
    deploy: Task, tmp_path: Path
) -> None:
    """A team called "{{ target }}" arrives literally."""
    agent = RecordingAgent(REPLIES)
    Runner(agent).run_sync(deploy, tmp_path, inputs={"target": "AWS", "team": "{{ target }}"})
    assert "for team {{ target }} in eu-west" in agent.prompts[0]


def test_a_pipeline_fills_its_stage_prompts_and_stage_tasks(tmp_path: Path) -> None:
    """Stage prompts take the pipeline's inputs; a stage task's instructions its own."""
    pipeline = Pipeline.model_validate(
        {
            "name": "p",
            "inputs": [{"id": "file", "question": "Which file?", "header": "File"}],
            "stages": [
                {
                    "name": "one",
                    "prompt": "Create {{ file }}.",
                    "exit_when": [{"file_exists": "deploy.txt"}],
                }
            ],
        }
    )
    replies: list[dict[str, Any]] = [
        {"tools": [{"Write": {"file_path": "deploy.txt", "content": "x"}}]},
        {"when": "tool_result", "text": "Done."},
    ]
    agent = RecordingAgent(replies)

    report = PipelineRunner(agent).run_sync(pipeline, tmp_path, inputs={"file": "deploy.txt"})

    assert report.verdict == "accepted"
    assert "Create deploy.txt." in agent.prompts[0]
    with pytest.raises(InputsInvalidError):
        PipelineRunner(agent).run_sync(pipeline, tmp_path / "other", restart=True)


@pytest.mark.cli
def test_the_real_cli_sends_the_model_the_filled_instructions(
    deploy: Task,
    tmp_path: Path,
    scripted_model_server: ScriptedServerFactory,
) -> None:
    """Through Claude Code and the scripted model server: the first user text holds the
    values."""
    server = scripted_model_server(Script.model_validate({"replies": REPLIES}))
    agent = server.claude_agent(timeout=90, request_timeout=20)

    report = Runner(agent).run_sync(deploy, tmp_path, inputs={"target": "AWS", "team": "core"})

    assert report.verdict == "accepted"
    assert any("saying AWS for team core in eu-west" in text for text in server.user_texts())
