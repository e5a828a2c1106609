"""What ``phasegate execute`` writes to stdout: JSON lines a calling program reads as they come.

Each phase and gate event of the run is one ``{"type": "progress", ...}`` line (a running
``step`` count, the ``event``, the ``phase`` and its number, and ``percent``: the share of
phases accepted so far); a pipeline's lines name its ``stage`` instead. The last line is
one ``{"type": "result", ...}``: ``success``, a ``message``, the ``verdict``, the
``created_files`` and ``modified_files`` of the work
directory, the full ``report``, and on failure an ``error`` with a ``code``, the
``message`` and a ``recovery`` hint saying what to do next.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from phasegate._cli.output import print_result
from phasegate.errors import (
    IdempotencyKeyError,
    IdempotencyKeyReusedError,
    InputsInvalidError,
    PhasegateError,
    RunError,
    StalePlanError,
)
from phasegate.evidence.workspace import WorkspaceDiff
from phasegate.modes import STEP_NOUN, EventName
from phasegate.tasks.report import DefinitionReport
from phasegate.telemetry.events import RunEvent

_PROGRESS_EVENTS: frozenset[EventName] = frozenset({
    "run.started", "phase.started", "phase.marker", "phase.gate", "check.ran",
    "phase.completed", "pipeline.started", "stage.started", "stage.checked", "stage.completed",
})  # fmt: skip
_TOTALS: dict[EventName, str] = {"run.started": "phases", "pipeline.started": "stages"}
"""The event that says how many units (phases, stages) the run has, and its field."""

_RECOVERY = {
    "stale_plan": "run `phasegate plan` again with the same context, answer its questions, "
    "then execute the new plan",
    "invalid_inputs": "answer every input listed in errors with one of its options or a "
    "concrete value, then execute again",
    "idempotency_key_reused": "use a new --idempotency-key for a new request, or repeat the "
    "first request exactly",
    "bad_idempotency_key": "use a key of 1 to 255 printable ASCII characters",
    "bad_input": "fix the input the message names, then execute again",
    "agent_failed": "check the agent's credentials and network, then execute again (the "
    "same --idempotency-key is safe: a failed run is not kept)",
    "rejected": "read the report's phases (or stages) for what the gate refused; answer "
    "differently or fix the project, then execute again with a new --idempotency-key",
}


def write_line(line: dict[str, Any]) -> None:
    """One JSON object on one line of stdout, flushed so a reader sees it at once."""
    print_result(json.dumps(line, ensure_ascii=False), raw=True)


@dataclass
class ProgressLines:
    """An event sink writing a progress line for each phase and gate event."""

    step: int = 0
    units: int = 0
    """Phases of the task, or stages of the pipeline."""
    accepted: frozenset[int] = frozenset()

    def __call__(self, event: RunEvent) -> None:
        if event.event not in _PROGRESS_EVENTS:
            return
        fields = event.fields
        if event.event in _TOTALS:
            self.units = int(fields[_TOTALS[event.event]])
        unit = "stage" if "stage" in fields and event.event != "pipeline.started" else "phase"
        accepted = fields.get("accepted", fields.get("passed"))
        if event.event in ("phase.gate", "stage.checked") and accepted:
            self.accepted |= {int(fields[unit])}
        self.step += 1
        line: dict[str, Any] = {"type": "progress", "step": self.step, "event": event.event}
        if unit in fields and "name" in fields:
            line |= {unit: fields["name"], f"{unit}_number": fields[unit]}
        if event.event in ("phase.gate", "stage.checked"):
            issues = fields.get("issues", fields.get("failed"))
            line |= {"accepted": bool(accepted), "issues": issues}
        if event.event == "check.ran":  # a check's command may take minutes: say each
            where = {key: fields[key] for key in ("stage", "phase") if fields.get(key)}
            line |= {f"{key}_number": number for key, number in where.items()}
            line |= {"check": fields["description"], "passed": fields["passed"],
                     "duration_ms": fields["duration_ms"]}  # fmt: skip
        line["percent"] = round(100 * len(self.accepted) / self.units) if self.units else 0
        write_line(line)


def result_line(report: DefinitionReport, changes: WorkspaceDiff) -> dict[str, Any]:
    """The result line of a run that produced a report (accepted, rejected or failed)."""
    line: dict[str, Any] = {
        "type": "result",
        "success": report.success,
        "message": _message(report),
        "verdict": report.verdict,
        "created_files": list(changes.added),
        "modified_files": list(changes.modified),
        "report": report.model_dump(mode="json"),
    }
    if not report.success:
        code = "agent_failed" if report.verdict == "error" else "rejected"
        line["error"] = {"code": code, "message": line["message"], "recovery": _RECOVERY[code]}
    return line


def error_line(error: PhasegateError, message: str) -> dict[str, Any]:
    """The result line of an execution refused or failed before any report (``message`` is
    the error as the command line words it)."""
    code = _code(error)
    body: dict[str, Any] = {"code": code, "message": message, "recovery": _RECOVERY[code]}
    if isinstance(error, InputsInvalidError):
        body["errors"] = [
            {"field": e.field, "provided": e.provided, "problem": e.problem,
             "requirement": e.requirement}
            for e in error.errors
        ]  # fmt: skip
    return {"type": "result", "success": False, "message": message, "verdict": None,
            "created_files": [], "modified_files": [], "report": None, "error": body}  # fmt: skip


def _code(error: PhasegateError) -> str:
    if isinstance(error, StalePlanError):
        return "stale_plan"
    if isinstance(error, InputsInvalidError):
        return "invalid_inputs"
    if isinstance(error, IdempotencyKeyReusedError):
        return "idempotency_key_reused"
    if isinstance(error, IdempotencyKeyError):
        return "bad_idempotency_key"
    return "agent_failed" if isinstance(error, RunError) else "bad_input"


def _message(report: DefinitionReport) -> str:
    name = report.name
    if report.success:
        return f"{name}: every {STEP_NOUN[report.kind]} accepted"
    if report.verdict == "error":
        return f"{name}: the run failed: {report.error}"
    refused = [step.name for step in report.steps if step.status != "accepted"]
    return f"{name}: {report.verdict}; not accepted: {', '.join(refused) or 'none'}"
