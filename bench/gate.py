"""How much a gate check costs, as ratios against baselines measured in the same process.

1. judge() on a long transcript vs. the baseline of parsing that transcript from stream-json
   (the least any offline judge must do);
2. a warm workspace snapshot (hash cache) vs. a cold one, on a tree of many files.

Run with ``make bench`` or ``.venv/bin/python bench/gate.py``. Prints medians and ratios.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from phasegate import load_task
from phasegate.evidence.saved_transcript import parse_stream_json
from phasegate.evidence.workspace import WorkspaceSnapshot, WorkspaceTimeline
from phasegate.workspace.observer import WorkspaceObserver
from phasegate.validators.judge import judge

ROOT = Path(__file__).resolve().parents[1]


def median_seconds(action: Callable[[], object], repeat: int = 7) -> float:
    """Median wall time of ``action`` over ``repeat`` runs."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def stream_json_lines(turns: int) -> list[str]:
    """A synthetic Claude Code transcript: each turn reads, edits and talks."""
    lines = [json.dumps({"type": "system", "subtype": "init", "cwd": "/work/project"})]
    for turn in range(turns):
        call = f"toolu_{turn:06d}"
        lines.append(json.dumps({"type": "assistant", "message": {"content": [
            {"type": "text", "text": f"Step {turn}: editing src/m{turn % 50}.py\n" + "x" * 400},
            {"type": "tool_use", "id": call, "name": "Edit",
             "input": {"file_path": f"/work/project/src/m{turn % 50}.py",
                       "old_string": "a", "new_string": "b"}},
        ]}}))  # fmt: skip
        lines.append(json.dumps({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": call, "content": "updated " + "y" * 400},
        ]}}))  # fmt: skip
    summary = {"files_changed": ["src/m1.py"], "description": "Edited the modules as asked."}
    done = "PHASE 1 COMPLETE: Files have been edited\n```json\n" + json.dumps(summary) + "\n```"
    lines.append(
        json.dumps({"type": "assistant", "message": {"content": [{"type": "text", "text": done}]}})
    )
    return lines


def bench_judge(turns: int) -> None:
    task = load_task(ROOT / "examples/fix-vulnerability/task.yaml")
    lines = stream_json_lines(turns)
    transcript = parse_stream_json(lines).transcript
    timeline = WorkspaceTimeline.of(
        [(0, WorkspaceSnapshot()), (len(transcript), WorkspaceSnapshot({"src/m1.py": "h"}))]
    )
    parse = median_seconds(lambda: parse_stream_json(lines))
    check = median_seconds(lambda: judge(task, transcript, timeline, workdir="/work/project"))
    print(f"judge, {len(transcript):>6} entries: parse baseline {parse * 1000:8.1f} ms, "
          f"judge {check * 1000:8.1f} ms, ratio {check / parse:5.2f}x")  # fmt: skip


def bench_snapshot(files: int) -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        for number in range(files):
            folder = root / f"pkg{number % 40}"
            folder.mkdir(exist_ok=True)
            (folder / f"m{number}.py").write_bytes(os.urandom(2048))
        old = time.time() - 60  # older than the racy window, so the cache may keep them
        for path in root.rglob("*.py"):
            os.utime(path, (old, old))
        cold = median_seconds(lambda: WorkspaceObserver(root).snapshot(), repeat=3)
        observer = WorkspaceObserver(root)
        observer.snapshot()
        warm = median_seconds(observer.snapshot)
        print(f"snapshot, {files:>6} files: cold {cold * 1000:8.1f} ms, "
              f"warm {warm * 1000:8.1f} ms, ratio {warm / cold:5.2f}x")  # fmt: skip


if __name__ == "__main__":
    for turns in (100, 1000, 5000):
        bench_judge(turns)
    for files in (1000, 10000):
        bench_snapshot(files)
