"""docs/testing.md's scripted grader plays as the page tells it: the agent writes, the first
grader session finds the criterion not met, the feedback brings the fix, the second finds it
met."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import yaml

from phasegate.agents.protocol import Agent, AgentRequest, grading_agent
from phasegate.evidence.transcript import AssistantText, Entry, ToolCall
from phasegate.phases.checks import Rubric
from phasegate.phases.grader import GraderSettings
from phasegate.prompts.completion_tools import ToolAnswer
from phasegate.prompts.grader import GRADER_OPENING
from phasegate.testing import Script, ScriptedAgent
from phasegate.validators.grading import verdict_schema

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "testing.md"


def _section(heading: str) -> str:
    return DOC.read_text(encoding="utf-8").split(f"\n## {heading}\n", 1)[1].split("\n## ")[0]


class _Listener:
    """An observer that keeps the entries and lets every stop happen (a grader session's)."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []

    def on_entry(self, entry: Entry) -> None:
        self.entries.append(entry)

    async def on_stop(self) -> str | None:
        return None

    def on_retry(self, *, attempt: int, reason: str, delay_ms: int, source: str) -> None:
        raise AssertionError("the scripted agent never retries")

    async def on_tool_call(self, name: str, arguments: dict[str, Any]) -> ToolAnswer:
        raise AssertionError(f"no completion tool is offered, yet {name} was called")

    def before_tool(self, call: ToolCall) -> str | None:
        return None


class _GraderAtEachStop(_Listener):
    """The main session's observer: each stop runs a grader session, as the gate does, and
    answers with feedback while the criterion is not met."""

    def __init__(self, grader: Agent, workdir: Path) -> None:
        super().__init__()
        self.grader, self.workdir = grader, workdir
        self.verdicts: list[str] = []

    async def on_stop(self) -> str | None:
        session = _Listener()
        rubric = Rubric.model_validate({"criteria": "NOTES.md says how to run the tests"})
        request = AgentRequest(
            prompt=f"{GRADER_OPENING} Judge NOTES.md.",
            workdir=self.workdir,
            toolset=("Read", "Grep", "Glob"),
            output_schema=verdict_schema(rubric),
        )
        await self.grader.run(request, session)
        (call,) = [e for e in session.entries if isinstance(e, ToolCall)]
        (verdict,) = call.input["verdicts"]
        self.verdicts.append(verdict["verdict"])
        return None if verdict["verdict"] == "met" else f"Not met: {verdict['reason']}"


def test_the_scripted_grader_example_plays_as_the_page_tells_it(tmp_path: Path) -> None:
    """In process: the agent passes over the grader replies, and the grader's agent answers
    its two sessions with the two verdicts, in order."""
    (block,) = re.findall(r"```yaml\n(.*?)```", _section("A scripted grader"), re.S)
    script = Script.model_validate(yaml.safe_load(block))
    agent = ScriptedAgent(script)
    grader = grading_agent(agent, GraderSettings())
    assert grader is not None
    stops = _GraderAtEachStop(grader, tmp_path)

    asyncio.run(agent.run(AgentRequest(prompt="Write NOTES.md.", workdir=tmp_path), stops))

    assert stops.verdicts == ["not_met", "met"]
    said = [e.text for e in stops.entries if isinstance(e, AssistantText)]
    assert said == ["Done.", "Fixed."]
    assert (tmp_path / "NOTES.md").read_text() == "# Notes\n\nRun `make test`.\n"
