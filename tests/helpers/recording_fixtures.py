"""Recording folders made by hand, following ``docs/recordings.md``'s contract.

:func:`gate_run` is a two-phase task whose first phase is rejected once (a missing marker)
and then accepted; :func:`pipeline_run` is a pipeline whose ``review`` stage sends it back to
``implement`` (a second visit); :func:`many_calls` is a run of any number of tool calls.
Each takes the texts it puts where a model, a tool or a file would, so tests can plant markup.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FEEDBACK = (
    "Phase 1 (edit) is not complete yet.\n- missing_marker: print the line "
    "PHASE 1 COMPLETE: <what you did> after the work."
)
"""The gate feedback of :func:`gate_run`'s rejected check."""
DIFF = """--- a/app.py
+++ b/app.py
@@ -1,3 +1,3 @@
 import os
-query = "SELECT * FROM users WHERE id = " + user_id
+query = "SELECT * FROM users WHERE id = %s"
 run(query)
"""
"""The diff of :func:`gate_run`'s first phase."""


@dataclass
class Builder:
    """A recording under construction: entries, parts, checks and diffs, written by
    :meth:`write`."""

    kind: str = "task"
    name: str = "fix-vulnerability"
    verdict: str = "accepted"
    entries: list[dict[str, Any]] = field(default_factory=list)
    parts: list[dict[str, Any]] = field(default_factory=list)
    checks: list[dict[str, Any]] = field(default_factory=list)
    diffs: dict[str, str] = field(default_factory=dict)
    cut: list[str] = field(default_factory=list)

    def add(self, kind: str, **fields: Any) -> int:
        """Append a transcript entry; its position."""
        self.entries.append({"i": len(self.entries), "kind": kind, **fields})
        return len(self.entries) - 1

    def call(self, name: str, tool_input: dict[str, Any], result: str, *, ok: bool = True) -> None:
        """A tool call and its result."""
        ident = f"toolu_{len(self.entries)}"
        self.add("tool_call", id=ident, name=name, input=tool_input)
        self.add("tool_result", tool_use_id=ident, ok=ok, content=result)

    def part(self, start: int, name: str, *, index: int | None = None, visit: int | None = None,
             kind: str = "phase", status: str = "accepted", attempts: int = 1,
             diff: str | None = None, files: Sequence[str] = (), note: str | None = None,
             tokens: tuple[int, int] = (1000, 200), cost: float = 0.002,
             duration_ms: int = 12_000) -> int:  # fmt: skip
        """Close a part that owns the entries from ``start`` to now; its position."""
        position = len(self.parts) + 1
        diff_name = None
        if diff is not None:
            label = f"phase-{index}" if kind == "phase" else f"stage-{name}-visit-{visit}"
            diff_name = f"diffs/{position:02d}-{label}.diff"
            self.diffs[diff_name] = diff
        self.parts.append({
            "kind": kind, "index": index, "name": name, "visit": visit, "status": status,
            "attempts": attempts, "entries": [start, len(self.entries)],
            "input_tokens": tokens[0], "output_tokens": tokens[1], "cost_usd": cost,
            "duration_ms": duration_ms, "diff": diff_name, "diff_files": list(files),
            "diff_cut": False, "diff_note": note,
        })  # fmt: skip
        return position - 1

    def check(self, part: int, attempt: int, trigger: str, *, accepted: bool,
              issues: Sequence[tuple[str, str]] = (),
              feedback: str | None = None) -> None:  # fmt: skip
        """A gate check at the current transcript position."""
        self.checks.append({
            "part": part, "attempt": attempt, "trigger": trigger, "accepted": accepted,
            "issues": [{"code": c, "phase": None, "message": m} for c, m in issues],
            "feedback": feedback, "entry": len(self.entries),
        })  # fmt: skip

    def write(self, folder: Path) -> Path:
        """The recording written into ``folder`` (made); ``folder``."""
        (folder / "diffs").mkdir(parents=True, exist_ok=True)
        manifest = {
            "recording_version": 1, "kind": self.kind, "name": self.name,
            "run_id": "0a1b2c3d4e5f", "verdict": self.verdict, "mode": "gate",
            "written_at": "2026-11-26T23:00:00.000+00:00", "phasegate_version": "0.9.0",
            "parts": self.parts,
            "unowned": {"entries": [], "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0},
            "files": {"report": "report.json", "transcript": "transcript.jsonl",
                      "checks": "checks.jsonl", "page": "index.html"},
            "cut": self.cut,
        }  # fmt: skip
        (folder / "recording.json").write_text(json.dumps(manifest, indent=2))
        report = {"kind": self.kind, "name": self.name, "verdict": self.verdict,
                  "duration_ms": sum(p["duration_ms"] for p in self.parts)}  # fmt: skip
        (folder / "report.json").write_text(json.dumps(report))
        (folder / "transcript.jsonl").write_text(_lines(self.entries))
        (folder / "checks.jsonl").write_text(_lines(self.checks))
        for name, text in self.diffs.items():
            (folder / name).write_text(text)
        return folder


def _added(path: str, line: str) -> str:
    return f"--- a/{path}\n+++ b/{path}\n@@ -0,0 +1 @@\n+{line}\n"


def _lines(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def gate_run(folder: Path, *, task: str = "fix-vulnerability", said: str = "Fixed it.",
             tool_output: str = "1 passed", file_name: str = "app.py",
             diff: str = DIFF) -> Path:  # fmt: skip
    """A gate run: phase 1 (edit) rejected once for a missing marker, then accepted; phase 2
    (summary) handed in through the completion tool."""
    run = Builder(name=task)
    run.add("session", cwd="/work/project", session_id="s-1", model="claude-sonnet")
    run.add("user", text=f"Task {task}: fix the SQL injection.\n\nPHASE 1: edit")
    run.call("Edit", {"file_path": file_name, "old_string": "+ user_id", "new_string": "%s"},
             "The file was edited.")  # fmt: skip
    run.call("Bash", {"command": "pytest -q"}, tool_output)
    run.add("assistant", text=said)
    run.check(0, 1, "stop", accepted=False, feedback=FEEDBACK,
              issues=[("missing_marker", "Phase 1 has no PHASE 1 COMPLETE: marker.")])  # fmt: skip
    run.add("user", text=FEEDBACK)
    run.add("assistant", text="Done.\nPHASE 1 COMPLETE: parameterised the query\n")
    run.check(0, 2, "stop", accepted=True)
    first = run.part(0, "edit", index=1, attempts=2, diff=diff, files=[file_name])
    start = len(run.entries)
    run.call("mcp__phasegate__submit_summary", {"summary": {"fixed": True}}, "Accepted.")
    run.check(1, 1, "tool", accepted=True, feedback="Accepted: the summary is complete.")
    run.add("result", subtype="success", num_turns=6, duration_ms=30_000)
    run.part(start, "summary", index=2, tokens=(400, 60), cost=0.001, duration_ms=4000)
    assert first == 0
    return run.write(folder)


def pipeline_run(folder: Path) -> Path:
    """A pipeline run: implement, review (which sends it back), implement again, review."""
    run = Builder(kind="pipeline", name="implement-and-review")
    run.add("user", text="Stage implement: add the endpoint.")
    run.call("Write", {"file_path": "api.py", "content": "def health(): return 'ok'\n"}, "Written.")
    run.add("assistant", text="The endpoint is written.")
    run.check(0, 1, "stop", accepted=True)
    run.part(0, "implement", kind="stage", visit=1, files=["api.py"],
             diff=_added("api.py", "def health(): return 'ok'"))  # fmt: skip
    start = len(run.entries)
    run.add("user", text="Stage review: review the change.")
    run.add("assistant", text="It lacks a test. <promise>BACK</promise>")
    run.check(1, 1, "stop", accepted=False, feedback="back_to implement: add a test first.",
              issues=[("stage_back", "review sent the run back to implement")])  # fmt: skip
    run.part(start, "review", kind="stage", visit=1, status="sent_back")
    start = len(run.entries)
    run.add("user", text="back_to implement: add a test first.")
    run.call("Write", {"file_path": "test_api.py", "content": "def test_health(): ...\n"}, "ok")
    run.check(2, 1, "stop", accepted=True)
    run.part(start, "implement", kind="stage", visit=2, files=["test_api.py"],
             diff=_added("test_api.py", "def test_health(): ..."))  # fmt: skip
    start = len(run.entries)
    run.add("assistant", text="Looks good now.")
    run.check(3, 1, "stop", accepted=True)
    run.part(start, "review", kind="stage", visit=2)
    return run.write(folder)


def many_calls(folder: Path, calls: int, *, result_chars: int = 400) -> Path:
    """A one-phase run of ``calls`` tool calls, each with a result of ``result_chars``."""
    run = Builder(name="many-calls")
    run.add("user", text="Read every file.")
    for n in range(calls):
        line = f"line {n} of the file, some content to read. "
        run.call("Read", {"file_path": f"src/module_{n}.py"},
                 (line * (result_chars // len(line) + 1))[:result_chars])  # fmt: skip
    run.add("assistant", text="PHASE 1 COMPLETE: read them all")
    run.check(0, 1, "stop", accepted=True)
    run.part(0, "read", index=1, duration_ms=600_000)
    return run.write(folder)
