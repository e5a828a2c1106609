"""The names every layer shares, in one place: run modes, pipeline isolations, verdicts, log
formats and report groupings (reports, the runners, the CLI and log readers all name them).
The defaults more than one layer states live here too. Nothing here imports anything heavy:
the command line builds its choices and defaults from these."""

from __future__ import annotations

from typing import Literal, TypeGuard, get_args

Mode = Literal["gate", "single-query", "unstructured"]
"""``gate``: judge at every stop and feed back; ``single-query``: one prompt, judged once;
``unstructured``: the same task without phase scaffolding, judged once (the A/B baseline)."""

MODES: tuple[Mode, ...] = get_args(Mode)
"""Every mode, in the order reports list them."""

LoggedMode = Mode | Literal["judge"]
"""What an event line's ``mode`` says: the mode a run was gated in, or ``judge`` for a saved
transcript judged afterwards (``phasegate judge``): no gate ran, so ``phasegate report``
keeps those runs in a row of their own."""

Isolation = Literal["session", "process"]
"""How a pipeline runs its stages: ``session``, all in one agent session; ``process``, a new
session per stage (for comparison)."""

ISOLATIONS: tuple[Isolation, ...] = get_args(Isolation)
"""Every isolation, the default first."""

RECORDING_PAGE = "index.html"
"""A recording folder's page (``docs/recordings.md``): what reports and the service link to."""

STATE_DIR = ".phasegate"
"""The folder phasegate keeps its own files in, inside a work directory or the service's root:
pipeline state and baselines, kept execute results, the service's runs and token. Snapshots,
copies and the planner's facts leave it out."""
BRANCHES_DIR = f"{STATE_DIR}/branches"
"""Where a pipeline's branches work, one folder each named after the branch, relative to
the pipeline's work directory (the scripted model server tells their conversations apart by it)."""

EventName = Literal[
    "run.started",
    "phase.started",
    "tool.called",
    "tool.refused",
    "sandbox.blocked",
    "phase.marker",
    "phase.gate",
    "check.ran",
    "phase.completed",
    "retry.scheduled",
    "run.completed",
    "pipeline.started",
    "pipeline.resumed",
    "stage.started",
    "stage.checked",
    "stage.revision",
    "stage.completed",
    "pipeline.completed",
    "run.queued",
    "run.cancelled",
    "run.interrupted",
    "done",
]
"""Every event a run writes (each with its fields in :mod:`phasegate.telemetry`);
readers of logs (metrics, the execute lines) name them with this type too."""

EVENT_NAMES: frozenset[EventName] = frozenset(get_args(EventName))
"""Every event name, for readers that check what a log line says."""


def is_event_name(value: object) -> TypeGuard[EventName]:
    """Whether ``value`` (read from a log line) is the name of a phasegate event."""
    return isinstance(value, str) and value in EVENT_NAMES


DefinitionKind = Literal["task", "pipeline"]
"""What a definition is: a phased task, or a pipeline of stages (``Task.kind``,
``Pipeline.kind``); runs, plans and batch units carry it."""

STEP_NOUN: dict[DefinitionKind, str] = {"task": "phase", "pipeline": "stage"}
"""What a definition's steps are called in messages: a task's phases, a pipeline's stages."""

Verdict = Literal["accepted", "rejected", "error"]
"""How a task run ended: every phase accepted; a phase rejected; the run could not finish."""

PhaseStatus = Literal["accepted", "rejected", "not_reached"]
"""How a phase ended."""

PipelineStatus = Literal["running", "accepted", "rejected", "error"]
"""Where a pipeline run stands (its state file) or how it ended (its report's verdict):
``running`` in a report means this process stopped before the last stage was judged."""

StageStatus = Literal["pending", "running", "accepted", "rejected"]
"""Where a pipeline stage stands: ``pending`` until it starts (or after a revision sent the
pipeline back before it)."""

ReportVerdict = Verdict | PipelineStatus
"""The verdict of any report: a task run's :data:`Verdict` or a pipeline's
:data:`PipelineStatus` (a batch unit and a service run carry it too)."""

StepStatus = PhaseStatus | StageStatus
"""The status of any step of a run: a phase's or a stage's."""

RunStatus = Literal["queued", "running", "finished", "failed", "cancelled", "interrupted"]
"""Where a run of the service is: waiting for a slot; its agent working; ended with a report
(see its verdict); ended without one (the run's process died, its definition failed to load);
cancelled on request; cut short by a restart or shutdown of the service."""

LogFormat = Literal["json", "console"]
"""How an event log writes a line: ``json``, one object a line (what dashboards read), or
``console``, a line for people."""

GroupBy = Literal["task", "mode", "phase"]
"""How a metrics report groups runs: per task, per task and mode, or per phase as well."""

DEFAULT_MAX_ATTEMPTS = 3
"""Gate checks per run unless the caller sets another budget: a first try, two feedbacks."""
