"""The gate: judges the phases each time the agent tries to stop, within an attempt budget,
and each time it calls a completion tool."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from phasegate.errors import TaskFileError
from phasegate.evidence.transcript import Transcript
from phasegate.evidence.workspace import WorkspaceTimeline
from phasegate.modes import DEFAULT_MAX_ATTEMPTS, Mode
from phasegate.phases.completion import PHASE_COMPLETE, SUBMIT_SUMMARY
from phasegate.phases.model import Task
from phasegate.phases.schemas import schema_problem
from phasegate.prompts.completion_tools import (
    ToolAnswer,
    error_answer,
    failed_answer,
    recorded_answer,
    success_answer,
)
from phasegate.prompts.feedback import FeedbackPrompt
from phasegate.prompts.templates import PromptTemplates
from phasegate.tasks.checks import TaskChecks
from phasegate.validators.judge import AnswerCheck, Judgment, judge
from phasegate.validators.windows import work_phase_number


@dataclass(frozen=True, slots=True)
class GateDecision:
    """The outcome of one gate check."""

    judgment: Judgment
    attempt: int
    feedback: str | None
    """The instruction to send so the agent goes on, or None when the run ends here."""


@dataclass(frozen=True, slots=True)
class ToolCheck:
    """The outcome of judging one completion tool call."""

    answer: ToolAnswer
    judgment: Judgment | None
    """The judgment behind the answer (None when the call was not judged)."""


class PhaseGate:
    """Judges a task's phases at every stop; in ``gate`` mode, feeds back until the budget ends.

    ``max_attempts`` counts gate checks per run: with 3, the agent gets its first try and
    two rounds of feedback. An output schema that cannot be applied as it is (possible only
    for a task put together without validation) is refused here, before any run: a
    :class:`~phasegate.errors.TaskFileError` naming the phase, never a crash mid-run.

    ``checks`` runs the task's checks on the disk at each judgment
    (:mod:`phasegate.tasks.checks`); without it, a task's checks cannot run and are never
    taken as passed.
    """

    def __init__(
        self,
        task: Task,
        *,
        workdir: str,
        mode: Mode = "gate",
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        templates: PromptTemplates | None = None,
        check_answer: AnswerCheck | None = None,
        checks: TaskChecks | None = None,
    ) -> None:
        _refuse_unusable_schemas(task)
        self.checks = checks or TaskChecks(task, None)
        self.judgments = 0
        """Judgments made so far, counted or not: the ``run`` a check's outcome names."""
        self.check_answer = check_answer
        self.task = task
        self.workdir = workdir
        self.mode = mode
        self.max_attempts = max_attempts
        self.templates = templates or PromptTemplates()
        self.attempts = 0
        self.last: GateDecision | None = None
        self._rejections: Counter[int] = Counter()
        self._tool_rejections: Counter[int] = Counter()

    def counts(self) -> dict[str, Any]:
        """The gate's counters as JSON-ready data, for a gate that lives across processes
        (the plugin's Stop hook is a new process at every stop); :meth:`restore` reads it."""
        return {
            "attempts": self.attempts,
            "rejections": {str(k): v for k, v in self._rejections.items()},
            "tool_rejections": {str(k): v for k, v in self._tool_rejections.items()},
        }

    def restore(self, counts: dict[str, Any]) -> None:
        """Take up the counters :meth:`counts` returned, as if this gate had made those
        checks itself."""
        self.attempts = int(counts.get("attempts", 0))
        self._rejections = Counter(
            {int(k): int(v) for k, v in counts.get("rejections", {}).items()}
        )
        self._tool_rejections = Counter(
            {int(k): int(v) for k, v in counts.get("tool_rejections", {}).items()}
        )

    def check(self, transcript: Transcript, timeline: WorkspaceTimeline) -> GateDecision:
        """Judge every phase now and decide whether the agent gets feedback."""
        self.attempts += 1
        judgment = self.judge(transcript, timeline)
        self._rejections.update(p.index for p in judgment.phases if not p.accepted)
        feedback = None
        if not judgment.accepted and self.mode == "gate" and self.attempts < self.max_attempts:
            prompt = FeedbackPrompt.build(
                self.task, judgment.issues, attempts_left=self.max_attempts - self.attempts
            )
            feedback = prompt.render(self.templates)
        self.last = GateDecision(judgment, self.attempts, feedback)
        return self.last

    def answer_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        transcript: Transcript,
        timeline: WorkspaceTimeline,
    ) -> ToolCheck:
        """Judge a completion tool call now; ``transcript`` already holds the call.

        ``phase_complete(phase=N)`` passes when phases 1..N have no issue; ``submit_summary``
        when every phase passes. Rejected calls count as that phase's attempts; after
        ``max_attempts`` rejected calls for one phase, the tool stops judging it.
        """
        attempted = _attempted(name, arguments)
        index = self.called_phase(name, arguments)
        if isinstance(index, str):
            return ToolCheck(
                error_answer(attempted, index, "Call it with a valid phase number, then go on."),
                None,
            )
        if self.mode != "gate":
            return ToolCheck(recorded_answer(attempted), None)
        if self._tool_rejections[index] >= self.max_attempts:
            return ToolCheck(
                error_answer(
                    attempted,
                    f"phase {index} has used its {self.max_attempts} checks",
                    "Do not call the completion tools again; end your turn.",
                ),
                None,
            )
        judgment = self.judge(transcript, timeline)
        relevant = [phase for phase in judgment.phases if phase.index <= index]
        issues = [issue for phase in relevant for issue in phase.issues]
        if not issues:
            return ToolCheck(success_answer(self.task, attempted, index), judgment)
        self._tool_rejections[index] += 1
        self._rejections.update(phase.index for phase in relevant if not phase.accepted)
        return ToolCheck(failed_answer(self.task, attempted, issues), judgment)

    def called_phase(self, name: str, arguments: dict[str, Any]) -> int | str:
        """The phase (its number) a completion tool call is about, or what is wrong with
        the call."""
        output = self.task.output_phase
        if name == SUBMIT_SUMMARY:
            return (
                self.task.index_of(output)
                if output is not None
                else "this task has no output phase"
            )
        if name != PHASE_COMPLETE:
            return f"{name} is not a phasegate completion tool"
        raw = arguments.get("phase")
        number = work_phase_number(self.task, raw)
        if number is None:
            work = ", ".join(str(self.task.index_of(p)) for p in self.task.work_phases)
            return f"phase must be the number of a work phase ({work or 'none'}); got {raw!r}"
        return number

    def judge(
        self, transcript: Transcript, timeline: WorkspaceTimeline, *, run_checks: bool = True
    ) -> Judgment:
        """Judge every phase without counting an attempt, the task's checks included;
        ``run_checks=False`` (describing a run that failed) runs none: only outcomes kept for
        the disk as it is count."""
        self.judgments += 1
        judgment = judge(
            self.task,
            transcript,
            timeline,
            workdir=self.workdir,
            markers=self.mode != "unstructured",
            check_answer=self.check_answer,
        )
        return self.checks.apply(
            judgment, transcript, timeline, attempt=self.judgments, run=run_checks
        )

    def phase_attempts(self, index: int) -> int:
        """Checks phase ``index`` went through: its rejections, plus the accepting one."""
        accepted = self.last is not None and any(
            p.index == index and p.accepted for p in self.last.judgment.phases
        )
        return self._rejections[index] + (1 if accepted else 0)


def _refuse_unusable_schemas(task: Task) -> None:
    output = task.output_phase
    if output is not None and output.output_schema is not None:
        problem = schema_problem(output.output_schema)
        if problem is not None:
            where = f"phases.{task.index_of(output) - 1}.output_schema"
            raise TaskFileError(None, where, problem)


def _attempted(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The echo of a call: its arguments, with a summary reduced to its field names."""
    if name == SUBMIT_SUMMARY:
        summary = arguments.get("summary")
        fields = sorted(summary) if isinstance(summary, dict) else None
        return {"tool": name, "summary_fields": fields}
    return {"tool": name, **{k: v for k, v in arguments.items() if k in ("phase", "note")}}
