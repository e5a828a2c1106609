"""The gate: judges the phases each time the agent tries to stop, within an attempt budget."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from phasegate.evidence.transcript import Transcript
from phasegate.evidence.workspace import WorkspaceTimeline
from phasegate.phases.model import Task
from phasegate.prompts.feedback import FeedbackPrompt
from phasegate.prompts.templates import PromptTemplates
from phasegate.sdk.report import Mode
from phasegate.validators.judge import Judgment, judge


@dataclass(frozen=True, slots=True)
class GateDecision:
    """The outcome of one gate check."""

    judgment: Judgment
    attempt: int
    feedback: str | None
    """The instruction to send so the agent goes on, or None when the run ends here."""


class PhaseGate:
    """Judges a task's phases at every stop; in ``gate`` mode, feeds back until the budget ends.

    ``max_attempts`` counts gate checks per run: with 3, the agent gets its first try and
    two rounds of feedback.
    """

    def __init__(
        self,
        task: Task,
        *,
        workdir: str,
        mode: Mode = "gate",
        max_attempts: int = 3,
        templates: PromptTemplates | None = None,
    ) -> None:
        self.task = task
        self.workdir = workdir
        self.mode = mode
        self.max_attempts = max_attempts
        self.templates = templates or PromptTemplates()
        self.attempts = 0
        self.last: GateDecision | None = None
        self._rejections: Counter[int] = Counter()

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

    def judge(self, transcript: Transcript, timeline: WorkspaceTimeline) -> Judgment:
        """Judge every phase without counting an attempt (for describing a failed run)."""
        return judge(
            self.task,
            transcript,
            timeline,
            workdir=self.workdir,
            markers=self.mode != "unstructured",
        )

    def phase_attempts(self, index: int) -> int:
        """Checks phase ``index`` went through: its rejections, plus the accepting one."""
        accepted = self.last is not None and any(
            p.index == index and p.accepted for p in self.last.judgment.phases
        )
        return self._rejections[index] + (1 if accepted else 0)
