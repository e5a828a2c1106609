"""What a recording is made of, as the runners hand it over: checks, parts, the run."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from phasegate.evidence.transcript import Transcript, Usage
from phasegate.evidence.workspace import WorkspaceSnapshot
from phasegate.telemetry.events import GateTrigger

if TYPE_CHECKING:
    from phasegate.validators.issues import Issue

RECORDING_VERSION = 1
"""The version of the folder's format (``recording_version`` in ``recording.json``)."""

RecordingKind = Literal["task", "pipeline", "loop", "judged"]
"""What was recorded: a task run, a pipeline run, a Ralph loop, a judged saved transcript."""


@dataclass(frozen=True, slots=True, kw_only=True)
class IssueRecord:
    """One issue a check found: its code, its phase (None for a stage's exit check), and the
    sentence that says it."""

    code: str
    phase: int | None
    message: str

    def as_dict(self) -> dict[str, Any]:
        """The issue as a line of ``checks.jsonl`` holds it."""
        return {"code": self.code, "phase": self.phase, "message": self.message}


def issue_records(issues: Iterable[Issue]) -> tuple[IssueRecord, ...]:
    """A judgment's issues as a check records them."""
    return tuple(
        IssueRecord(code=issue.code.value, phase=issue.phase, message=issue.message)
        for issue in issues
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckRecord:
    """One gate check (a line of ``checks.jsonl``)."""

    part: int
    """The position of the part the check judged, in the recording's ``parts``."""
    attempt: int
    trigger: GateTrigger
    accepted: bool
    issues: tuple[IssueRecord, ...]
    feedback: str | None
    """Byte for byte what the agent got back: the feedback, a completion tool's answer, the
    next stage's prompt; None when the run ended there."""
    entry: int
    """How many transcript entries there were when the check ran."""

    def as_dict(self) -> dict[str, Any]:
        """The check as its line of ``checks.jsonl``."""
        return {
            "part": self.part,
            "attempt": self.attempt,
            "trigger": self.trigger,
            "accepted": self.accepted,
            "issues": [issue.as_dict() for issue in self.issues],
            "feedback": self.feedback,
            "entry": self.entry,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class PartRecord:
    """One part of a run: a task's phase, or one visit of a pipeline's stage."""

    kind: Literal["phase", "stage"]
    index: int
    """The phase's or stage's number, from 1."""
    name: str
    visit: int | None
    """The stage's visit, from 1 (None for a phase)."""
    status: str
    attempts: int
    start: int
    end: int
    """The transcript entries ``[start, end)`` the part owns."""
    usage: Usage
    duration_ms: int
    before: WorkspaceSnapshot | None = None
    after: WorkspaceSnapshot | None = None
    """The work directory when the part began and when it ended (None: not known)."""
    no_diff: str | None = None
    """Why the part has no diff at all (a judged transcript has no work directory)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunRecord:
    """A finished (or crashed) run, as the recording writes it."""

    kind: RecordingKind
    name: str
    run_id: str
    verdict: str
    mode: str
    report_json: str | None
    """The report as ``report.json`` holds it; None when the run crashed before it had one."""
    transcript: Transcript
    parts: tuple[PartRecord, ...]
    total: Usage
    """The report's tokens and cost: the parts', plus ``grader``, plus ``unowned``."""
    grader: Usage = field(default_factory=Usage)
    """The report's grader sessions' tokens and cost (its ``grader_usage``): part of
    ``total``, never of a part's or ``unowned``."""
    error: str | None = None
    """What ended a run that crashed (None otherwise)."""
    checks: tuple[CheckRecord, ...] = field(default=())
