"""Hand-written event-log lines with a controlled clock, for the metrics and report tests."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

START = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


class LogWriter:
    """Builds log lines the way EventLog writes them (event first), with a controlled clock."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def run(
        self,
        run_id: str,
        mode: str,
        phases: list[dict[str, Any]],
        *,
        verdict: str,
        attempts: int,
        findings: list[str] | None = None,
        task: str = "fix",
        start: datetime = START,
        duration_ms: float = 100_000,
    ) -> None:
        """One run: each phase dict has name, status, attempts, claim_s (seconds after the
        start of its claim, or None), gate_s (seconds of its accepting gate), tool_errors;
        ``duration_ms`` is what its ``run.completed`` reports."""

        def line(kind: str, seconds: float, **fields: Any) -> None:
            stamp = (start + timedelta(seconds=seconds)).isoformat(timespec="milliseconds")
            event = {"event": kind, "timestamp": stamp, "run_id": run_id, "task": task,
                     "mode": mode, "schema_version": 1, **fields}  # fmt: skip
            self.lines.append(json.dumps(event))

        line("run.started", 0, agent="scripted", workdir="/w", phases=len(phases), max_attempts=3)
        for index, phase in enumerate(phases, 1):
            line("phase.started", 0.1, phase=index, name=phase["name"])
            line("tool.called", 0.2, phase=index, tool="Edit", tool_use_id="a", ok=True)
            for _ in range(phase.get("tool_errors", 0)):
                line("tool.called", 0.3, phase=index, tool="Edit", tool_use_id="b", ok=False)
            if phase.get("claim_s") is not None:
                line("phase.marker", phase["claim_s"], phase=index, name=phase["name"], text="",
                     source="marker")  # fmt: skip
            if phase.get("gate_s") is not None:
                line("phase.gate", phase["gate_s"], phase=index, name=phase["name"], attempt=1,
                     trigger="stop", accepted=True, issues=[])  # fmt: skip
        for index, phase in enumerate(phases, 1):
            line("phase.completed", 99, phase=index, name=phase["name"], status=phase["status"],
                 attempts=phase["attempts"], duration_ms=10, completed_by=None, tools={},
                 tool_errors=0, files_changed=[], input_tokens=100, output_tokens=10,
                 cost_usd=0.01, issues=[])  # fmt: skip
        line("run.completed", 100, verdict=verdict, attempts=attempts, duration_ms=duration_ms,
             files_changed=[], findings=findings or [], reverted=False, input_tokens=1000,
             output_tokens=100, cost_usd=0.5, error=None)  # fmt: skip


def three_runs() -> LogWriter:
    """gate: accepted after 2 checks; single-query: rejected; unstructured: accepted at once."""
    log = LogWriter()
    log.run(
        "r1",
        "gate",
        [
            {
                "name": "edit",
                "status": "accepted",
                "attempts": 2,
                "claim_s": 3,
                "gate_s": 20,
                "tool_errors": 2,
            },
            {"name": "summary", "status": "accepted", "attempts": 1, "gate_s": 30},
        ],
        verdict="accepted",
        attempts=2,
    )
    log.run(
        "r2",
        "single-query",
        [
            {"name": "edit", "status": "rejected", "attempts": 1},
            {"name": "summary", "status": "rejected", "attempts": 1},
        ],
        verdict="rejected",
        attempts=1,
        findings=["claimed_not_changed"],
    )
    log.run("r3", "unstructured", [
        {"name": "edit", "status": "accepted", "attempts": 1, "claim_s": 8, "gate_s": 9},
        {"name": "summary", "status": "accepted", "attempts": 1, "gate_s": 9},
    ], verdict="accepted", attempts=1)  # fmt: skip
    return log
