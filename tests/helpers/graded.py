"""Rubric outcomes as a grader would leave them, made up for the tests of the views that show
them (reports, events, ``phasegate report``, the job summary, the page): each criterion's
verdict and reason, and what its grader sessions cost.

No grader runs here: the runs with a scripted grader are end-to-end tests of their own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from phasegate.agents.protocol import AgentObserver, AgentRequest
from phasegate.evidence.transcript import (
    AssistantText,
    RunResult,
    SessionStart,
    TurnUsage,
    Usage,
)
from phasegate.phases.checks import Rubric
from phasegate.phases.grader import GraderSettings
from phasegate.validators.check_runs import CheckRun
from phasegate.validators.grading import CriterionVerdict, Graded, GraderEvidence, Verdict
from phasegate.validators.stage_checks import CheckOutcome

HOSTILE_REASON = (
    '</pre><script>alert("reason")</script><img src=x onerror=alert(1)>\n'
    "::error file=a.py::injected by a reason\n"
    "##[warning]legacy command\r\n"
    "| a | table | cell |\n"
    "```\n"
    "@someone [link](javascript:alert(1)) %0A%25"
)
"""A reason a grader could give: HTML, workflow commands (both forms), a table row, a
fence, a mention, a link and escapes, over lines ended every way."""


def verdict(
    name: str = "c1", said: Verdict = "met", reason: str = "every endpoint is named"
) -> CriterionVerdict:
    """One criterion's verdict."""
    return CriterionVerdict(id=name, criterion=f"criterion {name} holds", verdict=said,
                            reason=reason)  # fmt: skip


def graded(
    verdicts: Sequence[CriterionVerdict] = (verdict(),), usage: Usage | None = None
) -> CheckOutcome:
    """A rubric's outcome with ``verdicts``; ``usage``: what its grader sessions cost (None:
    the answer was kept for equal evidence, no session ran)."""
    ok = all(v.met for v in verdicts)
    return CheckOutcome(
        kind="rubric",
        description="a grader finds met: " + "; ".join(v.criterion for v in verdicts),
        ok=ok,
        detail="\n".join(f"{v.id} {v.verdict}: {v.reason}" for v in verdicts),
        remedy="" if ok else "make it hold",
        criteria=tuple(verdicts),
        grader_usage=usage,
    )


def ran(
    outcome: CheckOutcome, *, phase: int | None = 1, position: int = 0, run: int = 1
) -> CheckRun:
    """``outcome`` as a run of the check at ``position`` of ``phase``'s list (None: the
    task's own), made at gate judgment ``run``."""
    return CheckRun(phase=phase, position=position, outcome=outcome, run=run, duration_ms=40)


class FixedGrader:
    """A grader that gives the same verdicts every time (in order, the last for every
    criterion past them), each answer costing ``usage`` (a session each): the
    :class:`~phasegate.validators.grading.Grader` a check disk is given."""

    def __init__(self, verdicts: Sequence[CriterionVerdict], usage: Usage) -> None:
        self.verdicts = tuple(verdicts)
        self.usage = usage
        self.asked: list[GraderEvidence] = []

    def grade(self, rubric: Rubric, evidence: GraderEvidence) -> Graded:
        """The fixed verdicts, one per criterion of ``rubric`` in its order."""
        self.asked.append(evidence)
        given = [
            self.verdicts[min(place, len(self.verdicts) - 1)] for place in range(len(rubric.ids))
        ]
        verdicts = tuple(
            CriterionVerdict(id=name, criterion=c.text, verdict=v.verdict, reason=v.reason)
            for name, c, v in zip(rubric.ids, rubric.criteria, given, strict=True)
        )
        return Graded(verdicts=verdicts, usage=self.usage, sessions=1)


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn of a :class:`SpendingAgent`: the files it writes, what it says, and the
    tokens of its response."""

    text: str
    usage: Usage
    files: dict[str, str] = field(default_factory=dict)


class SpendingAgent:
    """An agent whose every turn writes its files straight to the work directory, says its
    text and spends its response's tokens, then stops (and goes on with the next turn when
    told to); its session's result counts every response plus ``side`` (requests that are
    no response, as Claude Code's side requests), at ``cost_usd``. It can start a grader
    (``grading_agent``): the tests give the check disk a :class:`FixedGrader` in its place."""

    name = "spending"

    def __init__(self, turns: Sequence[Turn], *, side: Usage, cost_usd: float) -> None:
        self.turns = tuple(turns)
        self.side = side
        self.cost_usd = cost_usd

    def grading_agent(self, settings: GraderSettings) -> SpendingAgent:
        """An agent for the grader's sessions (the tests never run one)."""
        return self

    async def run(self, request: AgentRequest, observer: AgentObserver) -> None:
        """Take the turns, one per instruction, until the gate lets the agent stop."""
        observer.on_entry(SessionStart(session_id="spending-1", cwd=str(request.workdir)))
        spent = Usage()
        for number, turn in enumerate(self.turns, start=1):
            for path, text in turn.files.items():
                (request.workdir / path).write_text(text, encoding="utf-8")
            observer.on_entry(TurnUsage(message_id=f"msg_{number}", usage=turn.usage, final=True))
            observer.on_entry(AssistantText(text=turn.text))
            spent = spent + turn.usage
            if await observer.on_stop() is None:
                break
        total = (spent + self.side).model_copy(update={"cost_usd": self.cost_usd})
        observer.on_entry(RunResult(usage=total, num_turns=len(self.turns)))
