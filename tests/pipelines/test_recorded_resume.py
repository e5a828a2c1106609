"""A recorded pipeline run that fails after its first stage, then resumed with a recording
of its own: each recording holds the visits its part of the run saw."""

from __future__ import annotations

from pathlib import Path

from phasegate import Pipeline, PipelineRunner
from phasegate.agents.retry import RetryPolicy
from phasegate.testing import Script, ScriptedAgent
from tests.helpers.recordings import assert_adds_up, read_recording
from tests.helpers.three_stages import THREE, write_step


def _agent(replies: list[dict[str, object]]) -> ScriptedAgent:
    return ScriptedAgent(Script.model_validate({"replies": replies}))


def test_a_failed_run_and_its_resume_each_record_the_visits_they_saw(
    work: Path, tmp_path: Path
) -> None:
    """The first part: stage one accepted with its diff, stage two begun (status running)
    when the API failed, verdict error. The resume: stage two (the same visit, numbered 1,
    from the transcript's start) and three, accepted; two.md in stage two's diff."""
    pipeline = Pipeline.model_validate(THREE)
    failing = _agent([
        {"contains": "Stage 1 of 3", "tools": [write_step("one")]},
        {"when": "tool_result", "text": "One is written."},
        {"contains": "Stage 2 of 3", "error": {"status": 500}},
    ])  # fmt: skip
    runner = PipelineRunner(failing, retry=RetryPolicy(session_retries=0))
    first = runner.run_sync(pipeline, work, record=tmp_path / "first")
    finishing = _agent([
        {"tools": [write_step("two")]},
        {"when": "tool_result", "text": "Two is written."},
        {"when": "user", "tools": [write_step("three")]},
        {"when": "tool_result", "text": "Three is written."},
    ])  # fmt: skip
    resumed = PipelineRunner(finishing).resume_sync(pipeline, work, record=tmp_path / "resumed")

    assert (first.verdict, resumed.verdict) == ("error", "accepted")
    before = read_recording(tmp_path / "first")
    assert [(p["name"], p["visit"], p["status"]) for p in before.parts] == [
        ("one", 1, "accepted"), ("two", 1, "running"),
    ]  # fmt: skip
    assert "+one" in before.diff(0).splitlines()
    assert before.manifest["verdict"] == "error"
    assert_adds_up(before)
    after = read_recording(tmp_path / "resumed")
    assert [(p["name"], p["visit"], p["status"]) for p in after.parts] == [
        ("two", 1, "accepted"), ("three", 1, "accepted"),
    ]  # fmt: skip
    assert after.parts[0]["entries"][0] == 0
    assert "+two" in after.diff(0).splitlines() and "+three" in after.diff(1).splitlines()
    assert after.manifest["run_id"] == before.manifest["run_id"]
    assert_adds_up(after)
