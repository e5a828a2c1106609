"""Rubric outcomes as a grader would leave them, made up for the tests of the views that show
them (reports, events, ``phasegate report``, the job summary, the page): each criterion's
verdict and reason, and what its grader sessions cost.

No grader runs here: the runs with a scripted grader are end-to-end tests of their own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

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
from phasegate.phases.model import Task
from phasegate.phases.pipeline import Pipeline
from phasegate.pipelines.report import PipelineReport
from phasegate.pipelines.runner import PipelineRunner
from phasegate.tasks.report import RunReport
from phasegate.tasks.runner import Runner
from phasegate.telemetry.log import EventLog
from phasegate.validators.check_runs import CheckRun
from phasegate.validators.grading import CriterionVerdict, Graded, GraderEvidence, Verdict
from phasegate.validators.stage_checks import CheckOutcome
from phasegate.workspace.checks import CheckDisk

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


GRADER_SESSION = Usage(input_tokens=300, output_tokens=40, cache_read_input_tokens=7,
                       cost_usd=0.012)  # fmt: skip
"""What each of :func:`graded_task`'s and :func:`graded_pipeline`'s grader sessions costs."""

GRADED_TASK = Task.model_validate(
    {
        "name": "graded",
        "phases": [
            {"name": "design", "instructions": "Write design.md.",
             "checks": [{"file_exists": "design.md"}, {"rubric": "it names every endpoint"}]},
            {"name": "build", "instructions": "Write build.txt.",
             "checks": [{"rubric": ["it builds", "it is short"]}]},
        ],
        "checks": [{"rubric": "the whole is coherent"}],
    }
)  # fmt: skip
"""Two phases with a rubric each, and one of the task's own."""

GRADED_PIPELINE = Pipeline.model_validate(
    {
        "name": "graded",
        "stages": [
            {"name": "design", "prompt": "Write design.md.",
             "exit_when": [{"file_exists": "design.md"},
                           {"rubric": ["it names every endpoint", "it is short"]}]},
            {"name": "build", "prompt": "Write build.txt.",
             "exit_when": [{"file_exists": "build.txt"}, {"rubric": "it builds"}]},
        ],
    }
)  # fmt: skip
"""Two stages whose exit checks hold a rubric each."""


@dataclass(frozen=True, slots=True)
class GradedRun:
    """A run with a grader: its report, its event log and its recording folder."""

    report: RunReport | PipelineReport
    log: Path
    recording: Path
    grader: FixedGrader


def graded_task(
    folder: Path, monkeypatch: pytest.MonkeyPatch, reason: str = "as it should"
) -> GradedRun:
    """:data:`GRADED_TASK` run to acceptance in ``folder``'s ``project`` by a
    :class:`SpendingAgent` (a response of its own in each phase, and a side request), its
    rubrics graded by a :class:`FixedGrader` whose second verdict gives ``reason``, logged
    and recorded in ``folder``. Phase 1 is graded at both judgments (its disk changed in
    between), phase 2 and the task's own rubric at the second: four sessions."""
    grader = FixedGrader([verdict("c1"), verdict("c2", reason=reason)], GRADER_SESSION)
    monkeypatch.setattr(CheckDisk, "use_grader", lambda disk, _: setattr(disk, "grader", grader))
    turns = [
        Turn("PHASE 1 COMPLETE: design.md written", Usage(input_tokens=1000, output_tokens=90),
             {"design.md": "GET /\n"}),
        Turn("PHASE 2 COMPLETE: build.txt written", Usage(input_tokens=2000, output_tokens=40),
             {"build.txt": "ok\n"}),
    ]  # fmt: skip
    agent = SpendingAgent(turns, side=Usage(input_tokens=30), cost_usd=0.4)
    workdir, log_file, recording = folder / "project", folder / "events.jsonl", folder / "rec"
    workdir.mkdir()
    with EventLog(file=log_file) as log:
        report = Runner(agent, on_event=log).run_sync(GRADED_TASK, workdir, record=recording)
    return GradedRun(report, log_file, recording, grader)


def graded_pipeline(
    folder: Path, monkeypatch: pytest.MonkeyPatch, reason: str = "as it should"
) -> GradedRun:
    """:data:`GRADED_PIPELINE` run to acceptance, as :func:`graded_task` runs its task: each
    stage graded once (two sessions)."""
    grader = FixedGrader([verdict("c1"), verdict("c2", reason=reason)], GRADER_SESSION)
    monkeypatch.setattr(CheckDisk, "use_grader", lambda disk, _: setattr(disk, "grader", grader))
    turns = [
        Turn("Design written.", Usage(input_tokens=1000, output_tokens=200),
             {"design.md": "GET /\n"}),
        Turn("Built.", Usage(input_tokens=3000, output_tokens=100), {"build.txt": "ok\n"}),
    ]  # fmt: skip
    agent = SpendingAgent(turns, side=Usage(input_tokens=50, output_tokens=5), cost_usd=0.5)
    workdir, log_file, recording = folder / "project", folder / "events.jsonl", folder / "rec"
    workdir.mkdir()
    with EventLog(file=log_file) as log:
        runner = PipelineRunner(agent, on_event=log)
        report = runner.run_sync(GRADED_PIPELINE, workdir, record=recording)
    return GradedRun(report, log_file, recording, grader)
