"""AgentGrader: one read-only session per new evidence, a kept answer for the same evidence,
asked again once when the answer is not a verdict, its cost kept apart."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from phasegate.agents.grading import GRADER_TOOLS, AgentGrader
from phasegate.agents.protocol import AgentObserver, AgentRequest
from phasegate.errors import AgentError
from phasegate.evidence.transcript import AssistantText, RunResult, ToolCall, ToolResult, Usage
from phasegate.phases.checks import Criterion, Rubric
from phasegate.prompts.grader import GRADER_OPENING
from phasegate.validators.grading import GraderEvidence

RUBRIC = Rubric(criteria=(Criterion(text="design.md names every endpoint"),))
MET = {"verdicts": [{"id": "c1", "verdict": "met", "reason": "design.md: 'GET /users'"}]}
SESSION_USAGE = Usage(input_tokens=1000, output_tokens=50, cost_usd=0.002)


class AnsweringAgent:
    """An agent whose sessions answer, in turn, with each of ``answers``: an object given as
    structured output, a text, or an exception raised."""

    name = "answering"

    def __init__(self, *answers: object) -> None:
        self.answers = list(answers)
        self.requests: list[AgentRequest] = []

    async def run(self, request: AgentRequest, observer: AgentObserver) -> None:
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, str):
            observer.on_entry(AssistantText(text=answer))
        else:
            assert isinstance(answer, dict)
            observer.on_entry(ToolCall(id="t1", name="StructuredOutput", input=answer))
            observer.on_entry(ToolResult(tool_use_id="t1", ok=True, content="ok"))
        observer.on_entry(RunResult(usage=SESSION_USAGE))
        assert await observer.on_stop() is None


def evidence(claim: str = "Done.") -> GraderEvidence:
    """Evidence with the agent's claim ``claim``."""
    return GraderEvidence(instructions="Write design.md.", claims=(claim,), disk="d1")


def test_a_grader_session_reads_only_and_answers_through_the_verdict_schema(work: Path) -> None:
    """The session runs in the work directory with the reading tools and the schema; its
    prompt is the grader's; its cost comes back with the verdicts."""
    agent = AnsweringAgent(MET)
    graded = AgentGrader(agent, work).grade(RUBRIC, evidence())
    assert [v.verdict for v in graded.verdicts] == ["met"]
    assert graded.problem is None
    assert graded.sessions == 1
    assert graded.usage == SESSION_USAGE
    (request,) = agent.requests
    assert request.workdir == work.resolve()
    assert request.toolset == GRADER_TOOLS == ("Read", "Grep", "Glob")
    assert request.tools == ()
    assert request.output_schema is not None
    assert request.prompt.startswith(GRADER_OPENING)


def test_the_same_evidence_is_never_graded_twice(work: Path) -> None:
    """The kept answer comes back at no cost, whatever the agent says over the same work;
    another disk runs a new session."""
    agent = AnsweringAgent(MET, MET)
    grader = AgentGrader(agent, work)
    grader.grade(RUBRIC, evidence())
    again = grader.grade(RUBRIC, evidence())
    assert len(agent.requests) == 1
    assert again.sessions == 0
    assert again.usage == Usage()
    assert [v.verdict for v in again.verdicts] == ["met"]
    grader.grade(RUBRIC, evidence("I am sure it is right."))
    assert len(agent.requests) == 1  # a new claim over the same work is not new evidence
    changed = GraderEvidence(instructions="Write design.md.", claims=("Done.",), disk="d2")
    grader.grade(RUBRIC, changed)
    assert len(agent.requests) == 2


def test_an_answer_that_is_not_a_verdict_is_asked_again_once_saying_what_was_wrong(
    work: Path,
) -> None:
    """The second session is told the problem; both sessions' cost is counted."""
    agent = AnsweringAgent({"verdicts": []}, MET)
    graded = AgentGrader(agent, work).grade(RUBRIC, evidence())
    assert [v.verdict for v in graded.verdicts] == ["met"]
    assert graded.sessions == 2
    assert graded.usage == SESSION_USAGE + SESSION_USAGE
    assert "Your earlier answer to this was not a verdict: no verdict for c1" in (
        agent.requests[1].prompt
    )


def test_a_second_miss_fails_with_the_problem_and_a_failed_session_counts_as_one(
    work: Path,
) -> None:
    """A session that failed is asked again too; two misses are a problem, not a verdict."""
    agent = AnsweringAgent(AgentError("API down"), "I think it is fine.")
    graded = AgentGrader(agent, work).grade(RUBRIC, evidence())
    assert graded.verdicts == ()
    assert graded.problem == 'the answer is not an object with a "verdicts" list (asked 2 times)'
    assert graded.sessions == 2
    assert "its session failed: API down" in agent.requests[1].prompt


def test_json_in_the_grader_s_text_is_read_when_it_gave_no_structured_output(work: Path) -> None:
    """A runtime without structured output may answer in text."""
    agent = AnsweringAgent(
        '```json\n{"verdicts": [{"id": "c1", "verdict": "not_met", "reason": "no GET"}]}\n```'
    )
    graded = AgentGrader(agent, work).grade(RUBRIC, evidence())
    assert [(v.verdict, v.reason) for v in graded.verdicts] == [("not_met", "no GET")]


def test_a_stopped_grader_starts_no_session(work: Path) -> None:
    """The run it grades for has ended."""
    stop = threading.Event()
    stop.set()
    agent = AnsweringAgent(MET)
    graded = AgentGrader(agent, work, stop=stop).grade(RUBRIC, evidence())
    assert agent.requests == []
    assert graded.problem == "the run ended before the grader answered"


def test_a_grader_asked_from_inside_an_event_loop_runs_its_session_on_a_loop_of_its_own(
    work: Path,
) -> None:
    """``grade`` is synchronous; called where a loop runs, its session runs on another."""
    agent = AnsweringAgent(MET)

    async def asking() -> list[str]:
        graded = AgentGrader(agent, work).grade(RUBRIC, evidence())
        return [v.verdict for v in graded.verdicts]

    assert asyncio.run(asking()) == ["met"]
