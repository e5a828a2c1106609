"""A pipeline whose stages run in branches: forked sessions, own work directories, joins.

The stage graph (:class:`~phasegate.phases.stage_graph.StageGraph`) says which branch each
stage runs on. A branch is run in **parts**: a part starts with the stage that starts the
branch, or with a join (which continues the branch of its first need), and runs the stages
that continue it, in one agent session, as a whole pipeline run would
(:class:`~phasegate.pipelines.run.PipelineRun` with a
:class:`~phasegate.pipelines.run.BranchPart`): gated stage by stage, ``back_to`` within the
part, ``protect``, ``allow_tools``, feedback, the sandbox.

- The main line (the first stage's branch) works in the work directory. Any other branch
  works in its own directory (:mod:`~phasegate.workspace.branches`) made from the state of
  the stage it forks from when that stage was accepted, in a session forked from that
  stage's (``needs: []``: from the state at the start, in a fresh session).
- A part starts once every stage its first stage needs is accepted, up to ``max_parallel``
  parts at once (each runs one stage at a time), as asyncio tasks in this process.
- A join merges the branches it joins into its own work directory against their fork
  points; a conflict leaves markers for the join to resolve and is put to it as a gate issue
  (``on_conflict: join``), or fails the run with nothing written (``fail``). It continues
  the first need's session (forked, so that saved session stays as it was) told what each
  branch did: its files and its last word.
- A part that is rejected (or fails) stops the others (``on_branch_failure: stop``) or lets
  the running ones finish (``finish``), and starts no new one; the run is rejected (or an
  error) and its report says which branches were stopped and which ran on. Branch
  directories are kept then, for the user to look at; after an accepted join the branches it
  merged are removed, and at the end any branch no join merged is merged into the work
  directory and removed.

Each part keeps its state in a file of its own (``.phasegate/parts/FIRST.json``); the run's
state file lists the parts (:class:`~phasegate.pipelines.state.BranchRecord`) and holds
every stage's record, so a killed run resumes each unfinished part in its own session, and
accepted parts are never run again.

It is one piece past 500 lines because the scheduling loop, the joins and the state of the
parts read and write the same records in one order (a part's acceptance forks its
dependents, a join's merge is recorded before its session starts, the run's state follows
every part's save); the pure parts live elsewhere (the graph in ``phases/stage_graph.py``,
merges in ``workspace/merge.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Collection, Coroutine
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from phasegate.agents.observer import ObserverSettings
from phasegate.agents.protocol import agent_version
from phasegate.errors import RunError
from phasegate.evidence.overhead import GateOverhead
from phasegate.evidence.transcript import Usage
from phasegate.modes import BRANCHES_DIR
from phasegate.phases.pipeline import Pipeline
from phasegate.phases.sandbox import SandboxOutcome
from phasegate.phases.stage_graph import StageGraph
from phasegate.pipelines.progress import StateFiles
from phasegate.pipelines.recorded import parallel_record
from phasegate.pipelines.report import (
    PipelineReport,
    ProcessFigures,
    completed_event,
    pipeline_report,
)
from phasegate.pipelines.run import PIPELINE_MODE, BranchPart, PipelineRun
from phasegate.pipelines.state import (
    BranchRecord,
    PipelineState,
    StageRecord,
    load_baseline,
    load_state,
    save_state,
    state_path,
)
from phasegate.recording.model import RunRecord
from phasegate.recording.recorder import Recorder
from phasegate.telemetry.events import (
    EventData,
    PipelineStarted,
    RunEvent,
)
from phasegate.workspace.branches import (
    FORKS_DIR,
    ForkPoint,
    MergeOutcome,
    capture_fork_point,
    close_branch,
    folder_name,
    load_fork_point,
    merge_branch,
    open_branch,
)
from phasegate.workspace.merge import FileConflict

PARTS_DIR = "parts"
"""Where, in the state folder, each branch part keeps its own state and baseline."""
SUMMARY_CHARS = 2000
"""How much of a branch's last word a join is told."""
HUNK_LINES = 20
"""Lines of each side of a conflicting hunk a join is told (the file holds them all)."""


@dataclass(frozen=True, slots=True)
class Part:
    """A part of a branch: ``stages`` run in one session, the first starting it."""

    branch: str
    stages: tuple[str, ...]

    @property
    def first(self) -> str:
        """The stage that starts the part."""
        return self.stages[0]

    @property
    def last(self) -> str:
        """The stage that ends it."""
        return self.stages[-1]


def parts_of(graph: StageGraph) -> tuple[Part, ...]:
    """The parts of every branch, in the order their first stages may start."""
    stages: dict[str, list[str]] = {}
    owner: dict[str, str] = {}
    for name in graph.order():
        needs = graph.needs(name)
        if graph.starts_branch(name) or graph.is_join(name) or not needs:
            stages[name] = [name]
            owner[name] = name
        else:
            first = owner[needs[0]]
            stages[first].append(name)
            owner[name] = first
    return tuple(Part(graph.branch_of(first), tuple(names)) for first, names in stages.items())


def one_after_another(pipeline: Pipeline) -> Pipeline:
    """``pipeline`` with its stages in the graph's order, each needing the one before it: how
    a single session with no forking (the plugin's, in the user's own session) runs a
    pipeline with branches. A sequential pipeline comes back as it is."""
    graph = StageGraph.of(pipeline)
    if graph.sequential:
        return pipeline
    by_name = {stage.name: stage for stage in pipeline.stages}
    stages = [by_name[name].model_copy(update={"needs": None}) for name in graph.order()]
    return pipeline.model_copy(update={"stages": stages})


class ParallelRun:
    """Drives one call of ``PipelineRunner.run`` or ``resume`` of a pipeline whose stages run
    in branches, to its report."""

    def __init__(
        self,
        settings: ObserverSettings,
        pipeline: Pipeline,
        root: Path,
        state: PipelineState,
        *,
        max_parallel: int | None,
        recorder: Recorder | None = None,
    ) -> None:
        self.settings = settings
        self.recorder = recorder
        """Where to write the run's recording when it ends: its report, and every stage visit
        this process ran (every branch's, the main line's, the joins') with its
        conversation, checks and diff in its own work directory, each branch part recorded
        as a whole pipeline run records itself (:meth:`Recorder.branch`,
        :func:`~phasegate.pipelines.recorded.parallel_record`)."""
        self.recorded: dict[str, list[RunRecord]] = {}
        """The records of the parts recorded in this process, in the order they started."""
        self.pipeline = pipeline
        self.root = root
        self.state = state
        self.graph = StageGraph.of(pipeline)
        self.parts = {part.first: part for part in parts_of(self.graph)}
        self.main_line = self.graph.branch_of(pipeline.stages[0].name)
        self.bound = max_parallel or len(self.parts)
        self.index = {stage.name: i for i, stage in enumerate(pipeline.stages)}
        self.sub_states: dict[str, PipelineState] = {}
        self.stops: dict[str, asyncio.Event] = {}
        self._marks: dict[str, object] = {}
        self.ended: set[str] = set()
        """The parts that have ended (in an earlier process too)."""
        self.ended_before: dict[str, set[str]] = {}
        """For each part started, the parts that had ended then (the others ran beside it)."""
        self.started = time.monotonic()
        self.agent_version: str | None = None
        self.final_message: str | None = None
        self.sandbox: SandboxOutcome | None = None
        """How the parts' sessions were confined (each part confines its own; the same
        settings apply to all)."""
        self.figures = ProcessFigures()
        """What this process's parts added to the run (usage, refusals, attempts blocked),
        for its ``pipeline.completed``: the state holds every process's."""

    # -- entry points ---------------------------------------------------------------------
    async def start(self) -> PipelineReport:
        """Run the pipeline from its first stages."""
        self.state.branches = [
            BranchRecord(branch=part.branch, first=part.first, stages=list(part.stages))
            for part in self.parts.values()
        ]
        for part in self.parts.values():
            fresh = self.graph.starts_branch(part.first) and not self.graph.needs(part.first)
            if fresh and part.branch != self.main_line:  # needs: [] forks the start's state
                capture_fork_point(self.root, self.root, part.branch)
        self._save()
        return await self._drive(resumed=False)

    async def resume(self) -> PipelineReport:
        """Continue an interrupted run: unfinished parts in their own sessions."""
        state = self.state
        state.status, state.error = "running", None
        state.resumes += 1
        for record in state.branches:
            if record.status != "pending":
                self._load_part(record)
            if record.status != "accepted":
                self._accept_finished(record)
            if record.status == "accepted":
                self.ended.add(record.first)
        self._save()
        return await self._drive(resumed=True)

    # -- the loop of parts ----------------------------------------------------------------
    async def _drive(self, *, resumed: bool) -> PipelineReport:
        self.agent_version = await asyncio.to_thread(agent_version, self.settings.agent)
        self._emit(
            PipelineStarted(
                agent=self.settings.agent.name,
                agent_version=self.agent_version,
                workdir=str(self.root),
                stages=len(self.pipeline.stages),
                stage=self.state.stage + 1,
                resumed=resumed,
            )
        )
        running: dict[asyncio.Task[PipelineReport], str] = {}
        failed: list[str] = []
        outer = asyncio.create_task(self._watch_outer_stop())
        try:
            async with asyncio.timeout(self.settings.timeout):
                while True:
                    if not failed:
                        for first in self._ready(set(running.values())):
                            if len(running) >= self.bound:
                                break
                            self.stops.setdefault(first, asyncio.Event())
                            self.ended_before[first] = set(self.ended)
                            running[asyncio.create_task(self._run_part(first))] = first
                    if not running:
                        break
                    done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                    await self._settle(done, running, failed)
        except TimeoutError:
            # The parts end as a stop ends them: what they did is kept, and a resume goes on.
            for event in self.stops.values():
                event.set()
            await asyncio.wait(running)
            await self._settle(set(running), running, failed)
            self.state.status = "error"
            self.state.error = (
                f"the run did not finish within its timeout of {self.settings.timeout:g} s; "
                "resume it to go on"
            )
        finally:
            outer.cancel()
            for task in running:
                task.cancel()
        if self.state.status == "running":
            try:
                self._finish(failed)
            except (RunError, OSError) as exc:
                self.state.status = "error"
                self.state.error = f"cannot merge the branches into the work directory: {exc}"
        report = self._report()
        if self.recorder is not None:
            records = [record for kept in self.recorded.values() for record in kept]
            self.recorder.finish(parallel_record(report, records))
        return report

    async def _settle(
        self,
        done: set[asyncio.Task[PipelineReport]],
        running: dict[asyncio.Task[PipelineReport], str],
        failed: list[str],
    ) -> None:
        """Take in the parts that ended; the first failure stops the others when the
        pipeline says so."""
        for task in done:
            first = running.pop(task)
            ok = await self._after_part(first, task)
            self.ended.add(first)
            if ok or failed:
                continue
            failed.append(first)
            if self.pipeline.on_branch_failure == "stop":
                for other in running.values():
                    self.stops[other].set()

    def _ready(self, running: set[str]) -> list[str]:
        """The parts that may start now: their first stage's needs all accepted, and the
        parts of those ended (a part's session may still be closing after its last stage
        is accepted; what follows forks or continues it, and merges its work, only then)."""
        accepted = {
            r.name
            for r in self.state.stages
            if r.status == "accepted" and self._part_of(r.name).first not in running
        }
        waiting = {
            r.first
            for r in self.state.branches
            if r.status in ("pending", "running", "stopped", "error")
        }
        return [
            first
            for first in self.graph.ready(accepted, set())
            if first in self.parts and first in waiting and first not in running
        ]

    async def _watch_outer_stop(self) -> None:
        """The caller's stop ends every part."""
        if self.settings.stop is None:
            return
        await self.settings.stop.wait()
        for event in self.stops.values():
            event.set()

    async def _run_part(self, first: str) -> PipelineReport:
        """Run (or resume) the part that starts with ``first``."""
        part, record = self.parts[first], self._record(first)
        stop = self.stops.setdefault(first, asyncio.Event())
        if self.settings.stop is not None and self.settings.stop.is_set():
            stop.set()
        settings = replace(self.settings, stop=stop, timeout=None)
        if first in self.sub_states and record.status != "pending":
            sub = self.sub_states[first]
            workdir = Path(record.workdir or self.root)
            files = self._files(first)
            baseline = load_baseline(self.root, files.baseline)
            opening = BranchPart(
                branch=part.branch,
                whole=self.pipeline,
                files=files,
                resume=record.forked_from,
                fork=record.forked_from is not None,
            )
            record.status = "running"
            run = PipelineRun(settings, self._sub_pipeline(part), workdir, sub, baseline=baseline,
                              recorder=self._branch_recorder(first), part=opening)  # fmt: skip
            return await self._counted(run, run.resume())
        workdir, resume, preamble = self._open(part, record)
        sub = PipelineState(
            pipeline=self.state.pipeline,
            digest=self.state.digest,
            run_id=self.state.run_id,
            isolation=self.state.isolation,
            stages=[self._stage(name) for name in self._line(part)],
        )
        self.sub_states[first] = sub
        self._link(sub)
        record.status, record.workdir, record.forked_from = "running", str(workdir), resume
        self.state.stage = self.index[first]
        self._save()
        opening = BranchPart(
            branch=part.branch, whole=self.pipeline, files=self._files(first), resume=resume,
            fork=resume is not None,
            preamble=preamble, start=self._line(part).index(first),
        )  # fmt: skip
        run = PipelineRun(settings, self._sub_pipeline(part), workdir, sub,
                          recorder=self._branch_recorder(first), part=opening)  # fmt: skip
        return await self._counted(run, run.start())

    async def _counted(
        self, run: PipelineRun, work: Coroutine[Any, Any, PipelineReport]
    ) -> PipelineReport:
        """``work``'s report, with what ``run`` added in this process counted in
        :attr:`figures` (also when it ends in an error after its report was made)."""
        try:
            return await work
        finally:
            self.figures += run.figures

    def _branch_recorder(self, first: str) -> Recorder | None:
        """The recorder of the part that starts with ``first``, as it starts (None: the run
        is not recorded); its record is kept for the run's when it ends."""
        if self.recorder is None:
            return None
        kept = self.recorded.setdefault(first, [])
        return self.recorder.branch(kept.append)

    def _open(self, part: Part, record: BranchRecord) -> tuple[Path, str | None, str]:
        """Where ``part`` works, the session it forks from, and what it is told first."""
        first = part.first
        if part.branch == self.main_line and not self.graph.is_join(first):
            return self.root, None, ""
        if self.graph.starts_branch(first):
            point = load_fork_point(self.root, part.branch)
            if point is None:
                raise AssertionError(f"branch {part.branch} has no fork point")
            workdir = open_branch(self.root, point)
            source = self.graph.forks_from(first)
            return workdir, self._session_after(source) if source else None, ""
        # A join: merge the branches it joins into the work directory of the one it continues.
        workdir = self._workdir_of(part.branch)
        outcomes: list[MergeOutcome] = []
        if not record.merged:
            for joined in self.graph.joins(first):
                branch = self.graph.branch_of(joined)
                into = {b for r in self.state.branches if r.branch == part.branch for b in r.merged}
                point = self._merge_base(branch, part.branch, into)
                outcome = merge_branch(
                    workdir,
                    self._workdir_of(branch),
                    point,
                    ours_label=part.branch,
                    theirs_label=branch,
                    write_conflicts=self.pipeline.on_conflict == "join",
                )
                outcomes.append(outcome)
                if not outcome.written:
                    files = "; ".join(f"{c.path} ({c.reason})" for c in outcome.conflicts)
                    raise _MergeRefused(
                        f"merging branch {branch} into {part.branch} for stage {first} "
                        f"conflicts in {files}; on_conflict is fail, so nothing was written. "
                        "Set on_conflict: join to hand conflicts to the joining stage"
                    )
                record.merged.append(branch)
                record.merged_files[branch] = list(outcome.changed)
                record.conflicts += [c.path for c in outcome.conflicts]
        needs = self.graph.needs(first)
        return workdir, self._session_after(needs[0]), self._join_message(first, outcomes)

    def _join_message(self, first: str, outcomes: list[MergeOutcome]) -> str:
        """What the join is told: each branch's files and last word, and any conflict."""
        lines = [f"The branches this stage ({first}) joins are done and merged here:"]
        merged = {o.branch: o for o in outcomes}
        for need in self.graph.needs(first):
            branch = self.graph.branch_of(need)
            owner = self._part_of(need)
            files = sorted({f for s in owner.stages for f in self._stage(s).files_changed})
            if branch in merged:
                files = list(merged[branch].changed)
            summary = (self._record(owner.first).summary or "").strip()[:SUMMARY_CHARS]
            lines.append(
                f"- branch {branch} (stages {', '.join(owner.stages)}): files changed: "
                f"{', '.join(files) or 'none'}; its last word: {summary or '(none)'}"
            )
        conflicts = [c for o in outcomes for c in o.conflicts]
        if conflicts:
            issue = {
                "code": "merge_conflict",
                "message": "these files changed in more than one branch and could not be "
                "merged; the conflict markers are in the files: resolve each hunk, keeping "
                "what each branch meant, and remove the markers",
                "files": [_conflict_json(c) for c in conflicts],
            }
            lines.append("")
            lines.append("```json")
            lines.append(json.dumps({"issues": [issue]}, indent=2, ensure_ascii=False))
            lines.append("```")
        return "\n".join(lines)

    async def _after_part(self, first: str, task: asyncio.Task[PipelineReport]) -> bool:
        """Take in how the part ended; False when it failed."""
        record = self._record(first)
        try:
            report = task.result()
        except _MergeRefused as refused:
            record.status, record.error, record.stage = "rejected", str(refused), first
            self._save()
            return False
        except Exception as exc:  # the part's run failed outright: this run fails too
            record.status, record.error = "error", f"{type(exc).__name__}: {exc}"
            self._save()
            return False
        sub = self.sub_states[first]
        self.sandbox = self.sandbox or report.sandbox
        record.session_id = sub.session_id
        record.summary = report.final_message or record.summary
        record.attempts = sum(self._stage(name).attempts for name in self.parts[first].stages)
        if self.pipeline.stages and sub.stages:
            record.stage = sub.current.name
        if report.verdict != "accepted":
            stopped = self.stops.get(first)
            if stopped is not None and stopped.is_set() and report.verdict != "rejected":
                record.status = "stopped"
            else:
                record.status = "rejected" if report.verdict == "rejected" else "error"
            record.error = report.error
            self._save()
            return False
        return self._accept(first)

    def _accept(self, first: str) -> bool:
        """The part every stage of which is accepted is: the branches that fork after its
        last stage get their fork points, a join's merged branches are removed; False when
        the forks cannot be made."""
        record, part = self._record(first), self.parts[first]
        record.status = "accepted"
        try:
            for dependent in self.graph.dependents(part.last):
                if self.graph.forks_from(dependent) == part.last:
                    capture_fork_point(self._workdir_of(part.branch), self.root, dependent)
        except (RunError, OSError) as exc:
            record.status, record.error = "error", f"cannot fork the branches after it: {exc}"
            self._save()
            return False
        if self.graph.is_join(first):
            for branch in record.merged:
                self._close(branch)
        self._save()
        return True

    def _accept_finished(self, record: BranchRecord) -> None:
        """A part killed after its last stage was accepted but before the part was (a
        resume): accepted now, in the session it ended in, so the stages after it fork or
        continue that session and no part runs it again. Its last word was not kept."""
        sub = self.sub_states.get(record.first)
        part = self.parts[record.first]
        if sub is None or any(self._stage(name).status != "accepted" for name in part.stages):
            return
        record.session_id = sub.session_id
        record.stage = part.last
        record.attempts = sum(self._stage(name).attempts for name in part.stages)
        self._accept(record.first)

    def _finish(self, failed: list[str]) -> None:
        """End the run: merge any branch no join merged, or say which parts failed."""
        state = self.state
        if failed:
            first = failed[0]
            record = self._record(first)
            before = self.ended_before.get(first, set())
            ran_on = [
                r.branch
                for r in state.branches
                if r.status == "accepted" and r.first not in before and r.first != first
            ]
            kept = sorted(
                {
                    Path(r.workdir).relative_to(self.root).as_posix()
                    for r in state.branches
                    if r.workdir and r.branch != self.main_line and Path(r.workdir).is_dir()
                }
            )
            stopped = [r.branch for r in state.branches if r.status == "stopped"]
            why = f"branch {record.branch} (stage {record.stage or first}) {record.status}"
            if record.conflicts or "on_conflict is fail" in (record.error or ""):
                why = f"stage {first} could not start"
            if record.error:
                why += f": {record.error}"
            how = self.pipeline.on_branch_failure
            parts = [why, f"on_branch_failure: {how}"]
            if stopped:
                parts.append(f"stopped: {', '.join(stopped)}")
            if ran_on and how == "finish":
                parts.append(f"ran on to the end: {', '.join(ran_on)}")
            if kept:
                parts.append(f"the branches' work directories are kept for you to look at: "
                             f"{', '.join(kept)}")  # fmt: skip
            state.status = "rejected" if record.status == "rejected" else "error"
            state.error = "; ".join(parts)
            return
        if any(r.status != "accepted" for r in state.stages):
            state.status = "error"
            state.error = "the run stopped before every stage was accepted; resume it"
            return
        conflicts: list[str] = []
        merged = {branch for r in state.branches for branch in r.merged}
        into_root = set(merged)
        unmerged: list[str] = []
        for record in state.branches:
            branch = record.branch
            if branch == self.main_line or record.first != branch or branch in merged:
                continue
            point = self._merge_base(branch, self.main_line, into_root)
            into_root.add(branch)
            outcome = merge_branch(
                self.root,
                self._workdir_of(branch),
                point,
                ours_label=self.main_line,
                theirs_label=branch,
                write_conflicts=self.pipeline.on_conflict == "join",
            )
            conflicts += [f"{c.path} (branch {branch})" for c in outcome.conflicts]
            if outcome.conflicts:
                state_of = "merged with conflict markers" if outcome.written else "not merged"
                where = self._workdir_of(branch).relative_to(self.root).as_posix()
                unmerged.append(f"{branch} ({state_of}, kept in {where})")
        if not conflicts:
            for record in state.branches:
                if record.first == record.branch and record.branch not in merged:
                    self._close(record.branch)
            for empty in (FORKS_DIR, BRANCHES_DIR):  # left only when something is in them
                with contextlib.suppress(OSError):
                    (self.root / empty).rmdir()
        if conflicts:
            state.status = "rejected"
            state.error = (
                "the branches that no stage joins could not be merged into the work directory: "
                f"{', '.join(conflicts)} conflict; branch {', '.join(unmerged)}; add a stage "
                "that needs them all to join them"
            )
            return
        state.status = "accepted"

    # -- state ----------------------------------------------------------------------------
    def _report(self) -> PipelineReport:
        state = self.state
        duration = int((time.monotonic() - self.started) * 1000)
        state.duration_ms += duration
        subs = list(self.sub_states.values())
        state.usage = sum((s.usage for s in subs), Usage())
        state.unattributed_usage = sum((s.unattributed_usage for s in subs), Usage())
        state.overhead = sum((s.overhead for s in subs), GateOverhead())
        state.sessions = sum(s.sessions for s in subs)
        state.stop_overrides = sum(s.stop_overrides for s in subs)
        state.revisions = [revision for s in subs for revision in s.revisions]
        main = [self.sub_states[r.first] for r in state.branches if r.first in self.sub_states]
        state.session_id = next((s.session_id for s in reversed(main) if s.session_id), None)
        self._save()
        last = self._part_of(self.graph.order()[-1]).first
        self.final_message = self._record(last).summary
        report = pipeline_report(
            state,
            agent=self.settings.agent.name,
            agent_version=self.agent_version,
            sandbox=self.sandbox,
            state_file=state_path(self.root),
            final_message=self.final_message,
        )
        figures = replace(self.figures, duration_ms=duration)
        self._emit(completed_event(report, figures))
        return report

    def _save(self) -> None:
        save_state(self.root, self.state)

    def _files(self, first: str) -> StateFiles:
        name = folder_name(first)
        return StateFiles(
            self.root,
            state=f"{PARTS_DIR}/{name}.json",
            baseline=f"{PARTS_DIR}/{name}-baseline.json",
            saved=lambda: self._part_saved(first),
        )

    def _part_saved(self, first: str) -> None:
        """A part saved its own state: the run's follows when the part's stage, a status or
        its session changed (a tool call alone changes neither: resume reads the parts'
        own files, so rewriting the run's file at every call would only slow the parts)."""
        sub = self.sub_states.get(first)
        if sub is None:
            return
        mark = (sub.stage, sub.session_id, tuple(r.status for r in sub.stages), sub.status)
        if self._marks.get(first) != mark:
            self._marks[first] = mark
            self._save()

    def _load_part(self, record: BranchRecord) -> None:
        """Take a started part's own state back in (a resume)."""
        with contextlib.suppress(Exception):
            sub = load_state(self.root, self._files(record.first).state)
            self.sub_states[record.first] = sub
            self._link(sub)
            return
        record.status = "pending"  # killed before its state was written: start it again

    def _link(self, sub: PipelineState) -> None:
        """The run's stage records are the parts' own, so every save shows them."""
        for record in sub.stages:
            self.state.stages[record.index - 1] = record

    def _record(self, first: str) -> BranchRecord:
        return next(r for r in self.state.branches if r.first == first)

    def _stage(self, name: str) -> StageRecord:
        return self.state.stages[self.index[name]]

    def _part_of(self, stage: str) -> Part:
        return next(p for p in self.parts.values() if stage in p.stages)

    def _session_after(self, stage: str) -> str | None:
        """The session the part that ran ``stage`` ended in."""
        return self._record(self._part_of(stage).first).session_id

    def _merge_base(self, branch: str, target: str, merged: Collection[str]) -> ForkPoint:
        """What ``branch`` is merged into ``target`` against: the state their lines last
        shared. That is ``branch``'s fork point when it forked from ``target`` (or from a
        branch ``merged`` into it already), and else the earlier of the two forks from the
        branch both lines come from (a ``needs: []`` branch forks from the main line's
        start), so whatever ``branch`` saw there that ``target`` did not (the main line's
        stages after the start) is merged too."""
        source = self.graph.forks_from(branch)
        parent = self.graph.branch_of(source) if source else self.main_line
        forked = branch
        if branch == self.main_line or (parent != target and parent not in merged):
            ours, theirs = self._lineage(target), self._lineage(branch)
            common = next(b for b in ours if b in theirs)
            forks = [theirs[common], ours[common]]
            forked = min((f for f in forks if f is not None), key=lambda f: f[1])[0]
        point = load_fork_point(self.root, forked)
        if point is None:
            raise RunError(f"the fork point of branch {forked} is missing in {self.root}")
        return replace(point, branch=branch)

    def _lineage(self, branch: str) -> dict[str, tuple[str, int] | None]:
        """``branch`` and the branches it forked from, up to the main line, each with the
        branch of that line forked from it and the position in it of the stage forked
        after (-1: its start); None for ``branch`` itself."""
        line: dict[str, tuple[str, int] | None] = {branch: None}
        child = branch
        while child != self.main_line:
            source = self.graph.forks_from(child)
            parent = self.graph.branch_of(source) if source else self.main_line
            at = self.graph.stages_of(parent).index(source) if source else -1
            line[parent] = (child, at)
            child = parent
        return line

    def _workdir_of(self, branch: str) -> Path:
        """Where ``branch`` works (the first of its parts that started says)."""
        for record in self.state.branches:
            if record.branch == branch and record.workdir:
                return Path(record.workdir)
        return self.root

    def _close(self, branch: str, point: ForkPoint | None = None) -> None:
        point = point or load_fork_point(self.root, branch)
        if point is not None and branch != self.main_line:
            with contextlib.suppress(RunError, OSError):  # what is left is only left behind
                close_branch(self.root, point)

    def _line(self, part: Part) -> tuple[str, ...]:
        """The stages of ``part``'s branch up to its last: earlier parts' (accepted already,
        and where a ``back_to`` of this part may go), then its own."""
        line = self.graph.stages_of(part.branch)
        return line[: line.index(part.last) + 1]

    def _sub_pipeline(self, part: Part) -> Pipeline:
        """The pipeline ``part`` runs: its branch's stages up to its last, each needing the one
        before it (a part starts at its first, :meth:`_line`)."""
        line = self._line(part)
        stages = [
            self.pipeline.stages[self.index[name]].model_copy(update={"needs": None})
            for name in line
        ]
        return self.pipeline.model_copy(
            update={"name": f"{self.pipeline.name}, branch {part.branch}", "stages": stages}
        )

    def _emit(self, data: EventData) -> None:
        if self.settings.on_event is not None:
            run = self.state
            self.settings.on_event(
                RunEvent(data, run.run_id, run.pipeline, PIPELINE_MODE, isolation=run.isolation)
            )


class _MergeRefused(Exception):
    """A join's merge conflicts and the pipeline says ``on_conflict: fail``."""


def _conflict_json(conflict: FileConflict) -> dict[str, object]:
    """A conflicting file as the join's gate issue names it."""
    return {
        "path": conflict.path,
        "reason": conflict.reason,
        "hunks": [
            {
                "line": hunk.line,
                "ours": "".join(hunk.ours[:HUNK_LINES]),
                "theirs": "".join(hunk.theirs[:HUNK_LINES]),
            }
            for hunk in conflict.hunks
        ],
    }
