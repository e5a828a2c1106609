"""A plugin pipeline run carried from one hook process to the next.

Each hook is a new process, so the run's pipeline machinery is rebuilt at every stop from the
session's ``state.json`` and written back after the check: the
:class:`~phasegate.pipelines.state.PipelineState` (what ``pipeline-state.json`` holds for
``phasegate pipeline run``), the current visit (where it began in the session's transcript,
its disk baseline, its task gate's counters), and the visits and checks the recording needs
(:class:`~phasegate.pipelines.recorded.VisitLog`). Tool counts and ``tool.called`` events come
from the session's transcript, as the runner's observer counts them from its messages.
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

from phasegate._plugin.state import SessionFiles
from phasegate.evidence.transcript import Entry, ToolCall, ToolRefused, ToolResult, Transcript
from phasegate.evidence.workspace import WorkspaceDiff, WorkspaceSnapshot, WorkspaceTimeline
from phasegate.phases.pipeline import Pipeline
from phasegate.telemetry.events import EventData

if TYPE_CHECKING:  # imported when a hook needs them: a stop, not every tool call
    from phasegate.pipelines.progress import StageProgress
    from phasegate.pipelines.recorded import VisitLog
    from phasegate.pipelines.state import PipelineState
    from phasegate.recording.recorder import Recorder


def pipeline_state(state: dict[str, Any]) -> PipelineState:
    from phasegate.pipelines.state import PipelineState

    return PipelineState.model_validate(state["pipeline_state"])


def progress(
    files: SessionFiles,
    state: dict[str, Any],
    pipeline: Pipeline,
    events: list[EventData],
    entries: list[Entry] | None = None,
) -> StageProgress:
    """The run's :class:`StageProgress` as the last process left it: its state, current
    visit (start, baseline, tools, task gate) and recorded visits, saving into ``state``."""
    from phasegate.pipelines.progress import StageProgress
    from phasegate.prompts.templates import PromptTemplates
    from phasegate.recording.recorder import Recorder

    class _SessionProgress(StageProgress):
        def save(self) -> None:  # the session's state.json, written by the caller
            state["pipeline_state"] = self.state.model_dump(mode="json")

        def keep_baseline(self, baseline: WorkspaceSnapshot) -> None:
            pass  # kept with the visit (_keep)

    pstate = pipeline_state(state)
    visit = state.get("visit")
    if visit is not None and entries is not None:
        pstate.current.tools = dict(tools(entries[int(visit["start"]) :]))
    visits = visit_log(state, Recorder(files.recording(state["run_id"]), page=None))
    baseline = WorkspaceSnapshot(visit["baseline"]) if visit is not None else None
    progress = _SessionProgress(
        pipeline, files.project, pstate, templates=PromptTemplates(), emit=events.append,
        baseline=baseline, unobserved=[files.events_path], visits=visits,
    )  # fmt: skip
    if visit is not None:
        progress.visit.start = int(visit["start"])
        if progress.visit.gate is not None:
            progress.visit.gate.restore(visit["gate"])
        if entries is not None:
            place_changes(files, progress, entries)
    return progress


def visit_log(state: dict[str, Any], recorder: Recorder) -> VisitLog:
    """The run's :class:`VisitLog` for ``recorder``, holding the visits kept so far (their
    wall-clock starts made this process's monotonic times)."""
    from phasegate.pipelines.recorded import VisitLog

    visits = VisitLog(recorder)
    now_wall, now_mono = time.time(), time.monotonic()
    for kept in state["visits"]:
        baseline = WorkspaceSnapshot(kept["baseline"]) if kept["baseline"] is not None else None
        visits.begin(kept["stage"], kept["name"], kept["visit"], kept["start"], baseline)
        last = visits.visits[-1]
        last.started = now_mono - (now_wall - float(kept["started"]))
        last.checks, last.passed = int(kept["checks"]), kept["passed"]
    return visits


def place_changes(files: SessionFiles, progress: StageProgress, entries: list[Entry]) -> None:
    """A task stage's timeline: the disk's changes since the visit began, each after the call
    that made it (the runner snapshots at each phase claim; a hook sees only the end)."""
    from phasegate.tasks.transcript_file import changes_timeline

    visit = progress.visit
    if visit.gate is None:
        return
    before, now = visit.baseline, progress.workspace.snapshot()
    diff = WorkspaceDiff.between(before, now)
    window = Transcript(entries=tuple(entries[visit.start :]))
    placed = changes_timeline(window, diff, str(files.project))
    # Its snapshots hold made-up values for the changed paths only; the check adds the real
    # disk at the end, so each point is made the real disk as it was then.
    unchanged = {path: value for path, value in before.files.items() if path not in diff.paths}

    def real(snapshot: WorkspaceSnapshot) -> WorkspaceSnapshot:
        return WorkspaceSnapshot(
            {**unchanged, **{path: (before if value.startswith("before:") else now).files[path]
                             for path, value in snapshot.files.items()}}
        )  # fmt: skip

    # The timeline's own points (it has no public reader of them), given their real values.
    points = zip(placed._positions, placed._snapshots, strict=True)
    visit.timeline = WorkspaceTimeline.of((position, real(s)) for position, s in points)


def tools(entries: list[Entry]) -> Counter[str]:
    """Successful calls per tool in ``entries`` (a refused call did not run)."""
    names = {e.id: e.name for e in entries if isinstance(e, ToolCall)}
    refused = {e.tool_use_id for e in entries if isinstance(e, ToolRefused)}
    return Counter(
        names[e.tool_use_id]
        for e in entries
        if isinstance(e, ToolResult) and e.ok and e.tool_use_id in names
        and e.tool_use_id not in refused
    )  # fmt: skip


def tools_called(
    state: dict[str, Any], progress: StageProgress, entries: list[Entry], events: list[EventData]
) -> None:
    """``tool.called`` for each call whose result arrived since the last stop."""
    from phasegate.telemetry.events import ToolCalled

    names = {e.id: e.name for e in entries if isinstance(e, ToolCall)}
    refused = {e.tool_use_id for e in entries if isinstance(e, ToolRefused)}
    seen = set(state["seen_results"])
    for entry in entries:
        if isinstance(entry, ToolResult) and entry.tool_use_id not in seen:
            seen.add(entry.tool_use_id)
            state["seen_results"].append(entry.tool_use_id)
            if entry.tool_use_id not in refused:
                events.append(ToolCalled(stage=progress.state.stage + 1,
                                         tool=names.get(entry.tool_use_id),
                                         tool_use_id=entry.tool_use_id, ok=entry.ok))  # fmt: skip


def keep(state: dict[str, Any], progress: StageProgress) -> None:
    """Write what the next process needs into ``state`` (saved by the caller)."""
    assert progress.visits is not None  # made by progress(), always with its visits
    state["pipeline_state"] = progress.state.model_dump(mode="json")
    visit = progress.visit
    state["visit"] = {
        "start": visit.start,
        "baseline": dict(visit.baseline.files),
        "gate": visit.gate.counts() if visit.gate is not None else {},
    }
    now_wall, now_mono = time.time(), time.monotonic()
    state["visits"] = [
        {"stage": v.stage, "name": v.name, "visit": v.visit, "start": v.start,
         "baseline": dict(v.baseline.files) if v.baseline is not None else None,
         "started": now_wall - (now_mono - v.started), "checks": v.checks, "passed": v.passed}
        for v in progress.visits.visits
    ]  # fmt: skip
    state["checks"] = state["checks"] + [
        dataclasses.asdict(check) for check in progress.visits.recorder.checks
    ]
