"""A run as ``phasegate serve`` shows it, canned: its event-log lines, as an SSE stream, and
its ``RunInfo`` body. Shared by the client's tests and the browser page's test."""

from __future__ import annotations

import json
from typing import Any

RUN_ID = "0123456789ab"
HOSTILE = "<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\">"
"""Event text a page must show as text: as markup it would run a script."""


def accepted_run_lines(run_id: str = RUN_ID, task: str = "fix-vulnerability") -> list[str]:
    """The event log of an accepted two-phase task run, one JSON line per event, as the
    service writes it: queued, the runner's events (a phase marker carrying hostile text),
    and the final ``done``."""
    common = {"run_id": run_id, "task": task, "mode": "gate", "schema_version": 3}
    clock = iter(range(10, 60))

    def line(event: str, **fields: Any) -> str:
        stamp = f"2026-11-21T09:00:{next(clock):02d}.000+00:00"
        return json.dumps({"event": event, "timestamp": stamp, **common, **fields})

    lines = [
        line("run.queued"),
        line("run.started", agent="claude", workdir="/srv/root/project", phases=2, max_attempts=3),
        line("phase.started", phase=1, name="edit"),
        line("tool.called", phase=1, tool="Read", tool_use_id="t1", ok=True),
        line("tool.called", phase=1, tool="Edit", tool_use_id="t2", ok=True),
        line("phase.marker", phase=1, name="edit", text=HOSTILE, source="marker"),
        line(
            "phase.gate", phase=1, name="edit", attempt=1, trigger="stop", accepted=True, issues=[]
        ),
        line("phase.started", phase=2, name="summary"),
        line(
            "phase.gate",
            phase=2,
            name="summary",
            attempt=2,
            trigger="stop",
            accepted=True,
            issues=[],
        ),
    ]
    for phase, name in ((1, "edit"), (2, "summary")):
        lines.append(
            line(
                "phase.completed",
                phase=phase,
                name=name,
                status="accepted",
                attempts=1,
                duration_ms=1200,
                completed_by="marker",
                tools={"Edit": 1},
                tool_errors=0,
                files_changed=["app.py"],
                input_tokens=900,
                output_tokens=120,
                cost_usd=0.01,
                issues=[],
            )
        )
    lines.append(
        line(
            "run.completed",
            verdict="accepted",
            attempts=2,
            duration_ms=2400,
            files_changed=["app.py"],
            findings=[],
            reverted=False,
            input_tokens=1800,
            output_tokens=240,
            cost_usd=0.02,
            error=None,
        )
    )
    lines.append(line("done", status="finished", verdict="accepted"))
    return lines


def sse_frames(lines: list[str], first_id: int = 1) -> list[bytes]:
    """Each line as one SSE event: its 1-based number as ``id``, its name, the line as data."""
    return [
        f"id: {n}\nevent: {json.loads(text)['event']}\ndata: {text}\n\n".encode()
        for n, text in enumerate(lines, start=first_id)
    ]


def run_info(run_id: str = RUN_ID, status: str = "finished", **fields: Any) -> dict[str, Any]:
    """A ``RunInfo`` body of a task run."""
    base = f"/v1/runs/{run_id}"
    info: dict[str, Any] = {
        "id": run_id, "kind": "task", "name": "fix-vulnerability", "status": status,
        "workdir": "project", "mode": "gate", "created_at": "2026-11-21T09:00:00+00:00",
        "links": {"self": base, "events": f"{base}/events", "cancel": f"{base}/cancel"},
    }  # fmt: skip
    if status == "finished":
        info.update(verdict="accepted", finished_at="2026-11-21T09:01:00+00:00")
    info.update(fields)
    return info
