"""The grader of ``rubric`` checks: a separate agent session, given the evidence, answering a
verdict per criterion (docs/grader.md).

:class:`AgentGrader` is the :class:`~phasegate.validators.grading.Grader` the gate uses. Each
judgment it is asked for runs one session of its own agent (the run's agent's
``grading_agent``: the same runtime, the grader's model, turns and cost cap) in the work
directory, with only the reading tools (Read, Grep, Glob) and an output schema: the
verdicts come back as the runtime's structured output. The agent under judgment never sees
this session, and the grader never sees the agent's conversation, only the evidence the
prompt fences as data (:mod:`phasegate.prompts.grader`).

- **Never twice on the same evidence.** An answer is kept by a digest of everything the
  grader is given (:func:`~phasegate.prompts.grader.evidence_key`); equal evidence gets the
  kept answer, with no new session and no new cost.
- **Asked again once.** An answer that is not a verdict per criterion (or a session that
  failed) is asked once more in a new session, told what was wrong; a second miss is a
  problem the check fails with.
- **Its cost, apart.** What its sessions used (the runtime's results, summed) comes back
  with each answer, never mixed into the agent's.

The gate calls :meth:`AgentGrader.grade` from the thread its checks run in, so it is
synchronous: the session runs on an event loop of its own there.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, MutableMapping
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from phasegate.agents.protocol import Agent, AgentRequest, EntryCollector
from phasegate.errors import AgentError
from phasegate.evidence.transcript import (
    AssistantText,
    Entry,
    ToolCall,
    ToolResult,
    Transcript,
    Usage,
)
from phasegate.phases.checks import Rubric
from phasegate.phases.completion import STRUCTURED_OUTPUT_TOOL
from phasegate.prompts.grader import again_prompt, evidence_key, grader_prompt
from phasegate.validators.grading import (
    Graded,
    GraderEvidence,
    VerdictProblem,
    read_verdicts,
    verdict_schema,
)
from phasegate.validators.json_extract import find_json

GRADER_TOOLS = ("Read", "Grep", "Glob")
"""The runtime's tools a grader is offered: reading only, in the work directory."""
_ATTEMPTS = 2  # the first answer, and one more when it was not a verdict

_T = TypeVar("_T")


class AgentGrader:
    """Grades rubrics by running ``agent`` (the grader's own) in ``workdir``; ``stop``, once
    set, ends a running session (the run it grades for has ended)."""

    def __init__(
        self,
        agent: Agent,
        workdir: str | Path,
        *,
        stop: threading.Event | None = None,
        answers: MutableMapping[str, Graded] | None = None,
    ) -> None:
        self.agent = agent
        self.workdir = Path(workdir).resolve()
        self.stop = stop or threading.Event()
        self._answers: MutableMapping[str, Graded] = {} if answers is None else answers
        """The answers kept, by evidence digest (``answers``: a store that outlives this
        grader, as the plugin's hooks need: each stop is a process of its own)."""
        self._lock = threading.Lock()

    def grade(self, rubric: Rubric, evidence: GraderEvidence) -> Graded:
        """A verdict per criterion of ``rubric`` on ``evidence`` (or why there is none); an
        answer kept for equal evidence comes back with ``sessions=0`` and no usage."""
        key = evidence_key(rubric, evidence)
        with self._lock:
            kept = self._answers.get(key)
        if kept is not None:
            return replace(kept, usage=Usage(), sessions=0)
        graded = _on_own_loop(self._graded(rubric, evidence))
        with self._lock:
            self._answers[key] = graded
        return graded

    async def _graded(self, rubric: Rubric, evidence: GraderEvidence) -> Graded:
        prompt = grader_prompt(rubric, evidence)
        schema = verdict_schema(rubric)
        usage = Usage()
        problem: str | None = None
        for attempt in range(1, _ATTEMPTS + 1):
            if self.stop.is_set():
                problem = "the run ended before the grader answered"
                return Graded(problem=problem, usage=usage, sessions=attempt - 1)
            asked = prompt if problem is None else again_prompt(prompt, problem)
            try:
                entries = await self._session(asked, schema)
            except AgentError as exc:
                problem = f"its session failed: {exc}"
                continue
            transcript = Transcript(entries=entries)
            usage = usage + transcript.result_usage()
            try:
                verdicts = read_verdicts(_answer(transcript), rubric)
            except VerdictProblem as exc:
                problem = str(exc)
                continue
            return Graded(verdicts=verdicts, usage=usage, sessions=attempt)
        return Graded(
            problem=f"{problem} (asked {_ATTEMPTS} times)", usage=usage, sessions=_ATTEMPTS
        )

    async def _session(self, prompt: str, schema: dict[str, Any]) -> list[Entry]:
        """One grader session's transcript entries; ended early when :attr:`stop` is set."""
        observer = EntryCollector()
        request = AgentRequest(
            prompt=prompt, workdir=self.workdir, toolset=GRADER_TOOLS, output_schema=schema
        )
        session = asyncio.ensure_future(self.agent.run(request, observer))
        while not session.done():
            await asyncio.wait({session}, timeout=0.2)
            if self.stop.is_set() and not session.done():
                session.cancel()
                raise AgentError("the run ended while the grader was reading")
        session.result()
        return observer.entries


def _answer(transcript: Transcript) -> object:
    """What the grader answered: the input of its last accepted ``StructuredOutput`` call,
    else the last JSON object in its last text (:func:`~phasegate.validators.json_extract.
    find_json`, fenced or not); None when it gave neither."""
    results = transcript.results_by_call()
    for entry in reversed(transcript.entries):
        if isinstance(entry, ToolCall) and entry.name == STRUCTURED_OUTPUT_TOOL:
            result: ToolResult | None = results.get(entry.id)
            if result is None or result.ok:
                return entry.input
    for entry in reversed(transcript.entries):
        if isinstance(entry, AssistantText) and entry.text.strip():
            parsed = [candidate.value for candidate in find_json(entry.text) if candidate.ok]
            return parsed[-1] if parsed else None
    return None


def _on_own_loop(work: Coroutine[Any, Any, _T]) -> _T:
    """``work`` run to its end on an event loop of its own: in this thread when none runs in
    it, else in a thread of its own (a coroutine must not block the loop it runs on)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work)
    done: list[_T] = []
    failed: list[BaseException] = []

    def _run() -> None:
        try:
            done.append(asyncio.run(work))
        except BaseException as exc:  # handed to the caller's thread
            failed.append(exc)

    thread = threading.Thread(target=_run, name="phasegate-grader")
    thread.start()
    thread.join()
    if failed:
        raise failed[0]
    return done[0]
