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
        checks: list[dict[str, Any]] | None = None,
        completed: bool = True,
    ) -> None:
        """One run: each phase dict has name, status, attempts, claim_s (seconds after the
        start of its claim, or None), gate_s (seconds of its accepting gate), tool_errors, and
        checks: the ``check.ran`` lines of the phase's checks (see :meth:`check_line`), each
        written at its time among the claim and the gate (a check after the claim at the same
        second, before the gate, as the runner tells them). ``checks`` are the task's own, at
        their times before the end; ``duration_ms`` is what its ``run.completed`` reports, and
        without ``completed`` the run never ends (no ``*.completed`` line)."""

        def line(kind: str, seconds: float, /, **fields: Any) -> None:
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
            timed: list[tuple[float, int, str, dict[str, Any]]] = []
            if phase.get("claim_s") is not None:
                timed.append((phase["claim_s"], 0, "phase.marker",
                              {"phase": index, "name": phase["name"], "text": "",
                               "source": "marker"}))  # fmt: skip
            timed += [(c["at"], 1, "check.ran", self.check_line(c, index))
                      for c in phase.get("checks", [])]  # fmt: skip
            if phase.get("gate_s") is not None:
                timed.append((phase["gate_s"], 2, "phase.gate",
                              {"phase": index, "name": phase["name"], "attempt": 1,
                               "trigger": "stop", "accepted": True, "issues": []}))  # fmt: skip
            for seconds, _, name, fields in sorted(timed, key=lambda t: t[:2]):
                line(name, seconds, **fields)
        for check in checks or []:
            line("check.ran", check["at"], **self.check_line(check, None))
        if not completed:
            return
        for index, phase in enumerate(phases, 1):
            line("phase.completed", 99, phase=index, name=phase["name"], status=phase["status"],
                 attempts=phase["attempts"], duration_ms=10, completed_by=None, tools={},
                 tool_errors=0, files_changed=[], input_tokens=100, output_tokens=10,
                 cost_usd=0.01, issues=[])  # fmt: skip
        line("run.completed", 100, verdict=verdict, attempts=attempts, duration_ms=duration_ms,
             files_changed=[], findings=findings or [], reverted=False, input_tokens=1000,
             output_tokens=100, cost_usd=0.5, error=None)  # fmt: skip

    @staticmethod
    def check_line(check: dict[str, Any], phase: int | None) -> dict[str, Any]:
        """The fields of a ``check.ran`` line from ``check``: at (seconds), description,
        passed, ms (its duration), and optionally kind (``command``), check (its position, 0)
        and exit_code (0 or 1 for a command, as it passed)."""
        kind = check.get("kind", "command")
        exit_code = check.get("exit_code", (0 if check["passed"] else 1) if kind == "command"
                              else None)  # fmt: skip
        fields: dict[str, Any] = {} if phase is None else {"phase": phase}
        return {**fields, "check": check.get("check", 0), "kind": kind,
                "description": check["description"], "run": 1, "exit_code": exit_code,
                "duration_ms": check["ms"], "passed": check["passed"]}  # fmt: skip


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
