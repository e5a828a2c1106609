"""Each stop of the plugin is a process of its own: a grader's answers are kept in the
project by evidence digest, so the same evidence at a later stop is never graded twice."""

from __future__ import annotations

import json
import os
from pathlib import Path

from phasegate._plugin.grading import ANSWERS_FILE, KEPT_ANSWERS, _KeptAnswers
from phasegate.agents.grading import AgentGrader
from phasegate.agents.protocol import AgentObserver, AgentRequest
from phasegate.evidence.transcript import RunResult, ToolCall, ToolResult, Usage
from phasegate.phases.checks import Criterion, Rubric
from phasegate.validators.grading import CriterionVerdict, Graded, GraderEvidence

RUBRIC = Rubric(criteria=(Criterion(text="design.md names every endpoint"),))


class CountingGrader:
    """A grader agent whose every session finds the criterion not met."""

    name = "counting"

    def __init__(self) -> None:
        self.sessions = 0

    async def run(self, request: AgentRequest, observer: AgentObserver) -> None:
        self.sessions += 1
        verdicts = [{"id": "c1", "verdict": "not_met", "reason": "no DELETE /users/{id}"}]
        observer.on_entry(ToolCall(id="t", name="StructuredOutput", input={"verdicts": verdicts}))
        observer.on_entry(ToolResult(tool_use_id="t", ok=True))
        observer.on_entry(RunResult(usage=Usage(input_tokens=10, cost_usd=0.001)))


def test_a_later_stop_gets_the_kept_answer_for_the_same_evidence(tmp_path: Path) -> None:
    """A second process (a new store read from the file) asks nothing again; other evidence
    is graded anew."""
    evidence = GraderEvidence(instructions="Write design.md.", claims=("Done.",), disk="d")
    agent = CountingGrader()
    first = AgentGrader(agent, tmp_path, answers=_KeptAnswers(tmp_path)).grade(RUBRIC, evidence)
    assert agent.sessions == 1 and first.sessions == 1
    kept = AgentGrader(agent, tmp_path, answers=_KeptAnswers(tmp_path)).grade(RUBRIC, evidence)
    assert agent.sessions == 1
    assert kept.sessions == 0 and kept.usage == Usage()
    assert kept.verdicts == first.verdicts
    other = GraderEvidence(instructions="Write design.md.", claims=("Fixed.",), disk="d2")
    AgentGrader(agent, tmp_path, answers=_KeptAnswers(tmp_path)).grade(RUBRIC, other)
    assert agent.sessions == 2


def test_an_unreadable_answers_file_is_an_empty_store_and_the_newest_answers_are_kept(
    tmp_path: Path,
) -> None:
    """A broken file asks again rather than failing the stop; the file stays bounded."""
    file = tmp_path / ".phasegate" / "plugin" / ANSWERS_FILE
    file.parent.mkdir(parents=True)
    file.write_text("{not json")
    store = _KeptAnswers(tmp_path)
    assert dict(store) == {}
    verdict = (CriterionVerdict("c1", "x", "met", "it is"),)
    for n in range(KEPT_ANSWERS + 5):
        store[f"key{n}"] = Graded(verdicts=verdict)
    data = json.loads(file.read_text())
    assert len(data) == KEPT_ANSWERS
    assert "key0" not in data and f"key{KEPT_ANSWERS + 4}" in data
    assert _KeptAnswers(tmp_path)["key10"].verdicts == verdict


def test_a_fifo_planted_as_the_answers_file_is_an_empty_store_not_a_hung_stop(
    tmp_path: Path,
) -> None:
    """Read as every planted file is (regular files only): the answer is asked again."""
    file = tmp_path / ".phasegate" / "plugin" / ANSWERS_FILE
    file.parent.mkdir(parents=True)
    os.mkfifo(file)
    assert dict(_KeptAnswers(tmp_path)) == {}
