"""The service's request and response bodies: what ``/openapi.json`` documents.

A request forbids unknown keys, so a typo is a 422 naming the field instead of a setting
silently ignored; an answer ignores them, since answers only ever gain fields and an older
client must still read a newer service. Paths in a request are relative to
the service's root (or absolute inside it); the service checks them, symlinks resolved,
before anything runs.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from phasegate._files.limits import ParseProblem
from phasegate._files.parsing import check_tree
from phasegate.modes import DefinitionKind, Isolation, Mode, ReportVerdict, RunStatus

API_VERSION = "v1"
"""The prefix of every endpoint but ``/healthz``; it changes when a field changes meaning."""

ACTIVE: frozenset[RunStatus] = frozenset({"queued", "running"})
"""The statuses of a run that has not ended."""


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Answer(BaseModel):
    # Answers only ever gain fields: a client ignores those it does not know yet.
    model_config = ConfigDict(extra="ignore", frozen=True)


def _bounded_tree(value: object) -> object:
    """``value`` when a JSON tree that deep and that large may be read, else a ValueError."""
    if isinstance(value, dict | list):
        try:
            check_tree(value)
        except ParseProblem as problem:
            raise ValueError(str(problem).replace("the file", "the object")) from None
    return value


class DefinitionRequest(_Body):
    """A task or a pipeline, and the work directory it is for."""

    task: str | dict[str, Any] | None = Field(
        default=None,
        description="A task: a file path under the root, or the task itself as an object.",
    )
    pipeline: str | dict[str, Any] | None = Field(
        default=None,
        description="A pipeline: a file path under the root, or the pipeline as an object.",
    )
    workdir: str = Field(
        min_length=1, max_length=4096, description="The work directory, a path under the root."
    )
    context: dict[str, Any] | None = Field(
        default=None, description="A JSON object the definition's context inference rules read."
    )

    @field_validator("task", "pipeline", "context")
    @classmethod
    def _bounded(cls, value: object) -> object:
        return _bounded_tree(value)

    @model_validator(mode="after")
    def _one_definition(self) -> DefinitionRequest:
        if (self.task is None) == (self.pipeline is None):
            raise ValueError("give exactly one of task and pipeline")
        return self

    @property
    def kind(self) -> DefinitionKind:
        """Whether this is about a task or a pipeline."""
        return "task" if self.task is not None else "pipeline"


class PlanRequest(DefinitionRequest):
    """``POST /v1/plans``: plan a task or pipeline for a work directory (read-only; the
    reference planner, the same as ``phasegate plan``)."""

    responses: dict[str, Any] | list[dict[str, Any]] | None = Field(
        default=None,
        description='Answers so far: {id: value}, AskUserQuestion\'s {"answers": {question: '
        "label}}, or a list of such objects, one per turn.",
    )
    questions_per_turn: int = Field(default=1, ge=1, le=2, description="Questions a turn asks.")

    @field_validator("responses")
    @classmethod
    def _bounded_responses(cls, value: object) -> object:
        return _bounded_tree(value)


class RunRequest(DefinitionRequest):
    """``POST /v1/runs``: what to run, where, with which input values, within which limits."""

    inputs: dict[str, Any] | None = Field(
        default=None,
        description="Values of the definition's inputs: {id: value} or AskUserQuestion's "
        "answer shape. What the project shows is inferred; a required input left without a "
        "value, or a refused answer, is a 422 before the run is queued.",
    )
    plan: dict[str, Any] | None = Field(
        default=None,
        description="The plan (from POST /v1/plans) these inputs answer: a plan that no longer "
        "matches the definition, its context or the work directory is a 409.",
    )
    copy_workdir: bool = Field(
        default=False,
        description="Run in a fresh copy of the work directory (kept with the run) instead "
        "of the directory itself.",
    )
    mode: Mode | None = Field(default=None, description="Tasks only; default gate.")
    isolation: Isolation | None = Field(
        default=None, description="Pipelines only; default session."
    )
    model: str | None = Field(default=None, max_length=200, description="The model to ask for.")
    max_attempts: int | None = Field(
        default=None, ge=1, le=100, description="Tasks only: gate checks the run may spend."
    )
    timeout: float | None = Field(
        default=None, gt=0, le=7 * 24 * 3600, allow_inf_nan=False,
        description="Seconds the run may take.",
    )  # fmt: skip
    max_cost: float | None = Field(
        default=None, ge=0, allow_inf_nan=False, description="USD the run may cost."
    )
    record: bool | None = Field(
        default=None,
        description="Write the run's recording (docs/recordings.md) into its folder, "
        "ROOT/.phasegate/runs/<id>/recording/, when it ends (the default, as null); false: "
        "no recording.",
    )

    @field_validator("inputs", "plan")
    @classmethod
    def _bounded_values(cls, value: object) -> object:
        return _bounded_tree(value)

    @model_validator(mode="after")
    def _settings_fit_the_kind(self) -> RunRequest:
        if self.pipeline is not None and (self.mode is not None or self.max_attempts is not None):
            raise ValueError("mode and max_attempts are for tasks; a pipeline has isolation")
        if self.task is not None and self.isolation is not None:
            raise ValueError("isolation is for pipelines; a task has mode")
        return self


class RunLinks(_Answer):
    """Where to follow a run."""

    self: str
    events: str
    cancel: str
    resume: str | None = None
    view: str | None = None
    """The run's page (``GET /v1/runs/{id}/view``), when the run recorded itself."""


class RunInfo(_Answer):
    """A run as ``GET /v1/runs/{id}`` shows it."""

    id: str
    kind: DefinitionKind
    name: str = Field(description="The task's or pipeline's name.")
    status: RunStatus
    verdict: ReportVerdict | None = Field(
        default=None, description="From the report once the run ended with one."
    )
    error: str | None = None
    workdir: str = Field(description="Where the agent works, relative to the root.")
    mode: Mode | None = None
    isolation: Isolation | None = None
    created_at: str
    started_at: str | None = None
    finished_at: str | None = None
    resumable: bool = Field(default=False, description="POST .../resume would continue it.")
    inputs: dict[str, str] = Field(
        default_factory=dict, description="The input values the run started with."
    )
    input_sources: dict[str, str] = Field(
        default_factory=dict,
        description="Where each input value came from: response, an inference rule, default.",
    )
    links: RunLinks
    report: dict[str, Any] | None = Field(
        default=None, description="The run or pipeline report, once there is one."
    )


class RunList(_Answer):
    """``GET /v1/runs``: newest first; pass ``next_cursor`` as ``cursor`` for the next page."""

    runs: list[RunInfo]
    next_cursor: str | None = None


class ErrorDetail(_Answer):
    """What went wrong, and what to do."""

    code: str
    message: str
    field: str | None = Field(default=None, description="The request field at fault, if one.")


class ErrorBody(_Answer):
    """Every error response the service writes itself."""

    error: ErrorDetail


class Health(_Answer):
    """``GET /healthz``."""

    status: Literal["ok", "draining"]
    api_version: str = API_VERSION
