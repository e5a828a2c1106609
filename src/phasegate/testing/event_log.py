"""Synthetic run-event logs, shaped exactly like the runner's, for testing dashboards and
``phasegate report`` at any size without running agents.

:func:`synthetic_log_lines` is deterministic for a seed: the same seed gives the same lines.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from phasegate.modes import DEFAULT_MAX_ATTEMPTS, MODES
from phasegate.telemetry.events import RUN_ID_LENGTH, SCHEMA_VERSION

_TASKS = (("fix-vulnerability", ("edit", "summary")), ("add-tests", ("write", "run", "report")))
"""The tasks the synthetic runs pick from, each with its phase names."""
_SUCCESS = {"gate": 0.9, "single-query": 0.55, "unstructured": 0.4}
"""How often a run of each mode is accepted."""
_START = datetime(2026, 11, 1, tzinfo=UTC)
"""When the first synthetic run starts, unless the caller gives a start."""
_RUN_GAP_SECONDS = (5, 90)
"""The range of seconds between one run's start and the next."""
_EVENT_GAP_MS = (200, 4000)
"""The range of milliseconds between two events of a run."""
_GATE_ATTEMPTS = (1, 1, 1, 2, 2, DEFAULT_MAX_ATTEMPTS)
"""Gate checks a gate-mode run takes, drawn from these: mostly one, at most the default."""
_TOOL_FAILURE_RATE = 0.08
"""How often a tool call fails."""
_NO_FINDING_RATE = 0.8
"""How often a run's report has no reconciliation finding."""


def synthetic_log_lines(
    events: int, *, seed: int = 0, start: datetime | None = None
) -> Iterator[str]:
    """About ``events`` JSON lines (whole runs, so a few more), as ``EventLog`` writes them."""
    rng = random.Random(seed)
    clock = start or _START
    written = 0
    run = 0
    while written < events:
        run += 1
        for event in _run_events(rng, run, clock):
            written += 1
            yield json.dumps(event, ensure_ascii=False)
        clock += timedelta(seconds=rng.randint(*_RUN_GAP_SECONDS))


def _run_events(rng: random.Random, run: int, clock: datetime) -> Iterator[dict[str, Any]]:
    task, phases = rng.choice(_TASKS)
    mode = rng.choice(MODES)
    run_id = f"{run:0{RUN_ID_LENGTH}x}"
    at = clock

    def event(kind: str, /, **fields: Any) -> dict[str, Any]:
        nonlocal at
        at += timedelta(milliseconds=rng.randint(*_EVENT_GAP_MS))
        return {
            "event": kind,
            "timestamp": at.isoformat(timespec="milliseconds"),
            "run_id": run_id,
            "task": task,
            "mode": mode,
            "schema_version": SCHEMA_VERSION,
            **fields,
        }

    accepted = rng.random() < _SUCCESS[mode]
    attempts = 1 if mode != "gate" else rng.choice(_GATE_ATTEMPTS)
    started = at
    yield event("run.started", agent="claude", workdir="/work/project", phases=len(phases),
                max_attempts=DEFAULT_MAX_ATTEMPTS)  # fmt: skip
    statuses = []
    for index, name in enumerate(phases, 1):
        yield event("phase.started", phase=index, name=name)
        for call in range(rng.randint(2, 8)):
            ok = rng.random() > _TOOL_FAILURE_RATE
            yield event("tool.called", phase=index, tool=rng.choice(("Read", "Edit", "Bash")),
                        tool_use_id=f"toolu_{run:08d}{index}{call}", ok=ok)  # fmt: skip
        passed = accepted or index < len(phases) - 1 or rng.random() < 0.5
        if index < len(phases):
            yield event("phase.marker", phase=index, name=name, text="done",
                        source=rng.choice(("marker", "tool")))  # fmt: skip
        for attempt in range(1, attempts + 1):
            final = attempt == attempts
            yield event("phase.gate", phase=index, name=name, attempt=attempt, trigger="stop",
                        accepted=passed and final, issues=[] if passed and final
                        else ["no_changes"])  # fmt: skip
        statuses.append("accepted" if passed else "rejected")
    duration = int((at - started).total_seconds() * 1000)
    # What the gate added to each phase's input: derived, not drawn, so the random stream
    # (and every figure drawn from it) stays as it was before the field.
    overheads = [_overhead(attempts + index) for index in range(1, len(phases) + 1)]
    for index, (name, status) in enumerate(zip(phases, statuses, strict=True), 1):
        yield event("phase.completed", phase=index, name=name, status=status, attempts=attempts,
                    duration_ms=rng.randint(500, 60_000), completed_by="marker",
                    tools={"Edit": 1}, tool_errors=0, files_changed=["app.py"],
                    input_tokens=rng.randint(500, 5000), output_tokens=rng.randint(50, 800),
                    cost_usd=round(rng.random() / 50, 6), overhead=overheads[index - 1],
                    issues=[] if status == "accepted" else ["no_changes"])  # fmt: skip
    verdict = "accepted" if all(s == "accepted" for s in statuses) else "rejected"
    yield event("run.completed", verdict=verdict, attempts=attempts, duration_ms=duration,
                files_changed=["app.py"],
                findings=[] if rng.random() < _NO_FINDING_RATE else ["change_without_tool"],
                reverted=False,
                input_tokens=rng.randint(2000, 20000), output_tokens=rng.randint(200, 3000),
                cost_usd=round(rng.random() / 10, 6), error=None,
                overhead={key: sum(o[key] for o in overheads) for key in overheads[0]})  # fmt: skip


def _overhead(requests: int) -> dict[str, int]:
    """A phase's ``overhead`` with ``requests`` requests: about what a real one carries."""
    return {"requests": requests, "input_tokens": 18_000 * requests,
            "tool_characters": 1_336 * requests, "text_characters": 2_000 * requests,
            "tool_tokens": 334 * requests, "text_tokens": 500 * requests}  # fmt: skip
