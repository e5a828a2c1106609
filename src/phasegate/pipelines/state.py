"""The pipeline state file: where a pipeline run stands, on disk, always whole.

``.phasegate/pipeline-state.json`` in the work directory holds the current stage, each
stage's status, attempts and latest check results, the revisions taken and the agent's
session id. It is rewritten after every transition (a stage starts, is checked, completes or
is revised; a session starts; a tool call succeeds) by writing a temporary file in the same
directory, fsyncing it and renaming it over the old one, so a reader (or a resume after a
SIGKILL) sees the previous state or the next one, never half of one.

The snapshot of the work directory taken when the current stage started (what ``changed``
checks compare against) lives beside it in ``pipeline-baseline.json``, written the same way
but only when a stage starts.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from phasegate._files import ParseProblem, parse_json, read_text
from phasegate._files.atomic import write_atomic
from phasegate._files.confined import inside_folder
from phasegate.errors import LinkedPathError, PipelineStateError, RunError
from phasegate.evidence.confinement import Blocked
from phasegate.evidence.overhead import GateOverhead
from phasegate.evidence.transcript import Usage
from phasegate.evidence.workspace import WorkspaceSnapshot
from phasegate.modes import STATE_DIR, Isolation, PipelineStatus, StageStatus
from phasegate.phases.pipeline import Pipeline
from phasegate.tasks.report import CriterionReport, RefusedCall
from phasegate.validators.subagents import SubagentWork

STATE_FILE = "pipeline-state.json"
BASELINE_FILE = "pipeline-baseline.json"
STATE_VERSION = 1
"""Version of the state file's shape; a resume refuses any other."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class CheckResult(BaseModel):
    """One exit check's latest outcome."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    description: str = Field(description="What must hold.")
    ok: bool
    detail: str = Field(description="What was found.")
    criteria: list[CriterionReport] = Field(
        default_factory=list,
        description="For a rubric a grader judged: its verdict and reason on each criterion "
        "(left out for every other check).",
        exclude_if=lambda criteria: not criteria,
    )


class StageRecord(BaseModel):
    """How one stage stands (state file) or went (report)."""

    model_config = ConfigDict(extra="forbid")

    index: int = Field(description="1-based position in the pipeline.")
    name: str
    branch: str | None = Field(
        default=None,
        description="The branch the stage runs on: the name of the stage that started it "
        "(docs/pipelines.md); null in a state written before branches.",
    )
    needs: list[str] | None = Field(
        default=None,
        description="The stages it waits for, defaults applied (the stage before it unless "
        "the pipeline says); null in a state written before needs.",
    )
    status: StageStatus = "pending"
    attempts: int = Field(default=0, description="Exit checks run, over all visits.")
    visit_attempts: int = Field(default=0, description="Exit checks run in the current visit.")
    visits: int = Field(default=0, description="Times the stage was started (revisions add).")
    duration_ms: int = Field(default=0, description="Time spent in the stage, over all visits.")
    checks: list[CheckResult] = Field(default_factory=list, description="Latest outcomes.")
    tools: dict[str, int] = Field(
        default_factory=dict, description="Successful tool calls in the current visit."
    )
    files_changed: list[str] = Field(
        default_factory=list, description="Files added, modified or deleted in the last visit."
    )
    usage: Usage = Field(
        default_factory=Usage,
        description="The agent's tokens of the model responses that started in this stage, "
        "over all visits and processes; cost is the agent's cost shared out by price-weighted "
        "tokens. The grader's are in grader_usage, never here.",
    )
    grader_usage: Usage = Field(
        default_factory=Usage,
        description="Tokens and cost of the grader sessions that judged this stage's rubric "
        "checks (its exit checks and its task's checks), every check of every visit and "
        "process counted; zero when no grader ran. Each session reports its own cost.",
    )
    overhead: GateOverhead = Field(
        default_factory=GateOverhead,
        description="The input this stage's requests carried, over all visits and processes, "
        "and the gate's share of it (its own text; estimated tokens).",
    )
    refusals: list[RefusedCall] = Field(
        default_factory=list,
        description="Tool calls refused before they ran in this stage (its allow_tools), over "
        "all visits and processes.",
    )
    blocked: list[Blocked] = Field(
        default_factory=list,
        description="Attempts to leave the sandbox made in this stage, over all visits and "
        "processes, in order (docs/sandbox.md).",
    )
    subagents: list[SubagentWork] = Field(
        default_factory=list,
        description="The part of tools (and of the failed calls) each subagent made in the "
        "current visit, with the files its editing calls named; the rest is the main agent's.",
    )


def stage_records(pipeline: Pipeline) -> list[StageRecord]:
    """A new run's records of ``pipeline``'s stages: each pending, with its branch and
    needs from the stage graph."""
    graph = pipeline.graph
    return [
        StageRecord(
            index=index,
            name=stage.name,
            branch=graph.branch_of(stage.name),
            needs=list(graph.needs(stage.name)),
        )
        for index, stage in enumerate(pipeline.stages, start=1)
    ]


class Revision(BaseModel):
    """A stage sent the pipeline back to an earlier one (``on_fail.back_to``)."""

    model_config = ConfigDict(extra="forbid")

    from_stage: str
    to_stage: str
    failures: list[str] = Field(description="Why: the failed checks, as sent to the agent.")


BranchStatus = Literal["pending", "running", "accepted", "rejected", "stopped", "error"]
"""How a part of a branch stands: ``stopped`` when another branch's failure stopped it."""


class BranchRecord(BaseModel):
    """One part of a branch of a parallel pipeline run: the stages it runs in one session, from
    the stage that starts the branch or from a join (which starts a new part of the branch it
    continues), to the last before the next join."""

    model_config = ConfigDict(extra="forbid")

    branch: str = Field(description="The branch: the name of the stage that started it.")
    first: str = Field(description="The part's first stage (a branch's first, or a join).")
    stages: list[str]
    status: BranchStatus = "pending"
    stage: str | None = Field(default=None, description="The stage it is in, or was last in.")
    workdir: str | None = Field(default=None, description="Where it works.")
    session_id: str | None = Field(default=None, description="Its latest agent session.")
    forked_from: str | None = Field(
        default=None, description="The session it was forked from (None: a fresh session)."
    )
    attempts: int = Field(default=0, description="Exit checks run over its stages.")
    merged: list[str] = Field(
        default_factory=list, description="A join's: the branches merged into its work directory."
    )
    merged_files: dict[str, list[str]] = Field(
        default_factory=dict,
        description="A join's: for each branch merged, the files its merge changed in the "
        "join's work directory.",
    )
    conflicts: list[str] = Field(
        default_factory=list, description="A join's: the files its merges left in conflict."
    )
    summary: str | None = Field(default=None, description="The agent's last word in it.")
    error: str | None = None


class PipelineState(BaseModel):
    """Everything a resume needs, and everything the report says."""

    model_config = ConfigDict(extra="forbid")

    state_version: int = STATE_VERSION
    pipeline: str
    digest: str = Field(description="Fingerprint of the pipeline definition (Pipeline.digest).")
    run_id: str
    isolation: Isolation
    status: PipelineStatus = "running"
    stage: int = Field(default=0, description="0-based index of the current stage.")
    stages: list[StageRecord]
    revisions: list[Revision] = Field(default_factory=list)
    branches: list[BranchRecord] = Field(
        default_factory=list,
        description="A parallel run's branch parts, in the order they start (empty for a "
        "pipeline whose stages run one after another).",
    )
    session_id: str | None = Field(default=None, description="The latest agent session.")
    sessions: int = Field(default=0, description="Agent sessions started, over all resumes.")
    resumes: int = Field(default=0, description="Times the run was resumed.")
    stop_overrides: int = Field(
        default=0,
        description="Times the agent runtime ended a turn although the Stop hook blocked it.",
    )
    usage: Usage = Field(
        default_factory=Usage,
        description="Tokens and cost of the run over all processes: the stages' usage and "
        "grader_usage, plus unattributed_usage.",
    )
    unattributed_usage: Usage = Field(
        default_factory=Usage,
        description="Tokens and cost no stage owns (the agent runtime's side requests).",
    )
    overhead: GateOverhead = Field(
        default_factory=GateOverhead,
        description="The input the run's requests carried over all processes, and the gate's "
        "share of it: the stages' overhead plus that of requests no stage owns.",
    )
    duration_ms: int = Field(default=0, description="Wall time of the run over all processes.")
    error: str | None = None
    started_at: str = Field(default_factory=_now)
    updated_at: str = Field(default_factory=_now)

    @property
    def current(self) -> StageRecord:
        """The record of the stage the run is in."""
        return self.stages[self.stage]


def state_path(workdir: Path) -> Path:
    """Where a work directory's pipeline state lives."""
    return workdir / STATE_DIR / STATE_FILE


def save_state(workdir: Path, state: PipelineState, name: str = STATE_FILE) -> None:
    """Write ``state`` atomically (stamping ``updated_at``); ``name``: the file in the state
    folder (a parallel run keeps each branch part's state in a file of its own)."""
    state.updated_at = _now()
    _write_atomic(workdir, name, state.model_dump_json(indent=2).encode())


def load_state(workdir: Path, name: str = STATE_FILE) -> PipelineState:
    """Read the state file (``name`` in the state folder); anything but a whole, valid state
    is a :class:`~phasegate.errors.PipelineStateError` saying what to do."""
    path = workdir / STATE_DIR / name
    data = _read_json(workdir, name, what="pipeline state")
    if isinstance(data, dict) and data.get("state_version") not in (None, STATE_VERSION):
        raise PipelineStateError(
            path,
            "state_version",
            f"written by another phasegate version ({data.get('state_version')!r}, this one "
            f"reads {STATE_VERSION}); finish it with that version, or start the pipeline over",
            option="restart",
        )
    try:
        state = PipelineState.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        field = ".".join(str(part) for part in first["loc"]) or None
        raise PipelineStateError(
            path, field, f"{first['msg']}; {_START_OVER}", option="restart"
        ) from None
    if not 0 <= state.stage < len(state.stages):  # an empty stages list has no stage 0
        raise PipelineStateError(
            path,
            "stage",
            f"{state.stage} is not a stage of this run; {_START_OVER}",
            option="restart",
        )
    return state


def refuse_to_overwrite(root: Path) -> None:
    """Refuse to start a run over an unfinished (or unreadable) one in ``root``."""
    if not state_path(root).exists():
        return
    try:
        state = load_state(root)
    except PipelineStateError as exc:
        raise PipelineStateError(
            exc.path,
            exc.field,
            f"{exc.problem}. A new run would replace it: start over anyway to discard it",
            option="restart",
        ) from None
    if state.status in ("running", "error"):
        raise PipelineStateError(
            state_path(root),
            None,
            f"run {state.run_id} of pipeline {state.pipeline!r} is unfinished (stage "
            f"{state.current.name}, {state.status}); resume it, or start over to discard it",
            option="restart",
        )


def save_baseline(workdir: Path, snapshot: WorkspaceSnapshot, name: str = BASELINE_FILE) -> None:
    """Keep the snapshot the current stage started from, for a resume."""
    _write_atomic(workdir, name, json.dumps(dict(snapshot.files)).encode())


def load_baseline(workdir: Path, name: str = BASELINE_FILE) -> WorkspaceSnapshot:
    """The snapshot the current stage started from (a PipelineStateError if unusable)."""
    path = workdir / STATE_DIR / name
    data = _read_json(workdir, name, what="stage baseline")
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in data.items()
    ):
        raise PipelineStateError(
            path, None, f"expected a mapping of path to hash; {_START_OVER}", option="restart"
        )
    return WorkspaceSnapshot(data)


_START_OVER = (
    "the file was not written by phasegate or was edited; restore it, or start the pipeline over"
)


def state_folder(workdir: Path, *, create: bool = False) -> Path:
    """``workdir``'s ``.phasegate`` folder (made when ``create``): a real folder, never a
    symbolic link (a :class:`~phasegate.errors.LinkedPathError` names one), so a project
    cannot send phasegate's state, or read it, out of the work directory."""
    try:
        return inside_folder(workdir, STATE_DIR, create=create)
    except LinkedPathError as exc:
        raise LinkedPathError(exc.root, exc.problem, option="workdir") from None


def _read_json(workdir: Path, name: str, *, what: str) -> Any:
    """The JSON in the state folder's file ``name``, within the limits every file phasegate
    reads has; never through a link."""
    path = state_folder(workdir) / name
    try:
        text = read_text(path, follow_links=False)
    except FileNotFoundError:
        raise PipelineStateError(
            path,
            None,
            f"no {what} here: nothing to resume in this work directory; start a new run",
        ) from None
    except OSError as exc:
        raise PipelineStateError(path, None, f"cannot read the {what}: {exc}") from None
    except ParseProblem as exc:
        raise PipelineStateError(
            path, None, f"the {what} {exc}; {_START_OVER}", option="restart"
        ) from None
    try:
        return parse_json(text)
    except ParseProblem as exc:
        problem = str(exc).removeprefix("invalid JSON ")
        raise PipelineStateError(
            path, None, f"not valid JSON ({problem}); {_START_OVER}", option="restart"
        ) from None


def _write_atomic(workdir: Path, name: str, data: bytes) -> None:
    """Replace the state folder's file ``name``; a link planted since the run started (the
    folder, or a folder in its place) ends the run, as a disk that cannot be written does."""
    path = workdir / STATE_DIR / name
    try:
        write_atomic(path, data, inside=workdir)
    except LinkedPathError as exc:
        raise RunError(f"cannot write {path}: {exc}", option="workdir") from None
    except OSError as exc:
        raise RunError(f"cannot write {path}: {exc}; check the work directory is writable") from exc
