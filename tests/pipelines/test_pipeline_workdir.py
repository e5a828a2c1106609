"""What a pipeline run needs of its work directory (room for its state, checked up front), and
what it leaves out of the agent's work there (its state, its event log)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from phasegate import EventLog, UsageError
from phasegate.phases.pipeline import Pipeline
from phasegate.agents.retry import RetryPolicy
from phasegate.pipelines.runner import PipelineRunner
from phasegate.pipelines.state import load_state
from phasegate.testing import Script, ScriptedAgent
from tests.helpers.read_only import read_only

ONE_STAGE = Pipeline.model_validate(
    {
        "name": "one",
        "stages": [
            {"name": "one", "prompt": "Write one.md.", "exit_when": [{"file_exists": "one.md"}]}
        ],
    }
)


def _runner(replies: list[dict[str, Any]]) -> PipelineRunner:
    agent = ScriptedAgent(Script.model_validate({"replies": replies}))
    return PipelineRunner(agent, retry=RetryPolicy(session_retries=0))


def test_resuming_in_a_directory_that_became_read_only_is_a_usage_error(tmp_path: Path) -> None:
    """The interrupted run's state is read, then the run is refused before the agent starts,
    naming the work directory option; the state is left as it was."""
    interrupted = _runner([{"error": {"status": 500}}]).run_sync(ONE_STAGE, tmp_path)
    assert interrupted.verdict == "error"
    saved = load_state(tmp_path)

    agent = _runner([{"tools": [{"Write": {"file_path": "one.md", "content": "one\n"}}]}])
    with read_only(tmp_path / ".phasegate"), pytest.raises(UsageError) as caught:
        agent.resume_sync(ONE_STAGE, tmp_path)

    assert caught.value.option == "workdir"
    assert "cannot keep the pipeline's state" in str(caught.value)
    assert load_state(tmp_path) == saved
    assert not (tmp_path / "one.md").exists()


def test_an_event_log_in_the_work_directory_is_no_change_the_agent_made(tmp_path: Path) -> None:
    """A stage that needs a change passes on the agent's change only, never on the log's."""
    pipeline = Pipeline.model_validate(
        {
            "name": "change",
            "stages": [
                {"name": "change", "prompt": "Change a file.", "exit_when": [{"changed": "**"}]}
            ],
        }
    )
    replies: list[dict[str, Any]] = [{"text": "Nothing to change."}] * 3
    with EventLog(file=tmp_path / "runs.jsonl") as log:
        agent = ScriptedAgent(Script.model_validate({"replies": replies}))
        report = PipelineRunner(agent, on_event=log).run_sync(pipeline, tmp_path)
    assert report.verdict == "rejected"
    assert report.stages[0].files_changed == []
