"""What a pipeline is: ordered :class:`Stage` s, each with a prompt and exit checks.

A pipeline runs its stages in order, in one agent session by default. A stage is complete
when every check of its ``exit_when`` holds (:mod:`phasegate.phases.checks`) and, for a stage
that runs a phased ``task``, when the task's gate accepts every phase. A stage that keeps
failing may send the pipeline back to an earlier stage with the failure as feedback
(``on_fail.back_to``), a bounded number of times (``max_revisions``)::

    name: prd-to-code
    stages:
      - name: architect
        prompt: Read prd.md and write architecture.md.
        exit_when:
          - file_exists: architecture.md
          - min_lines: {path: architecture.md, n: 20}
      - name: implement
        prompt_file: prompts/implement.md
        exit_when:
          - command: {argv: [python, -m, pytest, -q], timeout: 120}
        on_fail: {retry: 2, back_to: architect}

A stage waits for the one before it unless its ``needs`` names the stages it waits for
(``needs: []``: none); stages whose needs are accepted run at the same time, each branch in
its own session and work directory, bounded by ``max_parallel``. The graph, its branch rule
and its load errors (an unknown need, a cycle, a ``back_to`` into another branch) live in
:mod:`phasegate.phases.stage_graph`.

:func:`load_pipeline` reads such a file; ``prompt_file``, ``task`` and schema paths in it are
relative to the file.

A pipeline *declares inputs* when it or one of its stage tasks does. Only then are its
``{{ id }}`` placeholders checked (each must name an input, each input must be used) and,
at run time, filled in; a pipeline that declares none keeps every ``{{ ... }}`` as literal
text, as pagent prompt files and Ralph prompts need.

One concept in one module (about 500 lines): the stage and pipeline models, their load checks
and the file loader that feeds them locations are validated together; the graph, the checks,
the sentences and the grader's settings already live in modules of their own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)

from phasegate._files import (
    LocatedValueError,
    OptionValueError,
    ParseProblem,
    WholeNumber,
    read_mapping,
    read_text,
    validate_model,
)
from phasegate._files.digests import json_digest
from phasegate.errors import PipelineFileError, TaskFileError
from phasegate.modes import DefinitionKind
from phasegate.phases.checks import Check, ToolsUsed
from phasegate.phases.conditions import check_conditions
from phasegate.phases.grader import GraderSettings
from phasegate.phases.inputs import TaskInput
from phasegate.phases.loading import load_task, loading_context, task_from_mapping
from phasegate.phases.model import Task, ToolName, drop_empty_inputs, refuse_repeated_names
from phasegate.phases.placeholders import Location, check_placeholders, refuse_repeated_ids
from phasegate.phases.sandbox import Sandbox
from phasegate.phases.schemas import base_dir, files_root, named_file
from phasegate.phases.sentences import WrittenAsSentences
from phasegate.phases.stage_graph import StageGraph
from phasegate.phases.workdir_paths import ProtectGlob


class StageTexts(Protocol):
    """What of a stage may hold placeholders: its prompt and its phased task."""

    @property
    def prompt(self) -> str | None:
        """The stage's instructions, if any."""

    @property
    def task(self) -> Task | None:
        """The stage's phased task, if any."""


def all_inputs(inputs: Sequence[TaskInput], stages: Sequence[StageTexts]) -> tuple[TaskInput, ...]:
    """The pipeline's ``inputs``, then those its stage tasks declare (each id once)."""
    found = {item.id: item for item in inputs}
    for stage in stages:
        for item in stage.task.inputs if stage.task is not None else ():
            found.setdefault(item.id, item)
    return tuple(found.values())


def check_pipeline_inputs(inputs: Sequence[TaskInput], stages: Sequence[StageTexts]) -> None:
    """Refuse repeated inputs, a stage task declaring an input unlike the pipeline or an
    earlier stage task, and (when any input is declared) a placeholder naming no input or an
    input no text uses. Raises :class:`~phasegate._files.models.LocatedValueError` pointing
    at the field."""
    refuse_repeated_ids(inputs)
    own = {item.id: item for item in inputs}
    texts: list[tuple[Location, str]] = []
    for index, stage in enumerate(stages):
        texts.append((("stages", index, "prompt"), stage.prompt or ""))
        if stage.task is None:
            continue
        for phase_index, phase in enumerate(stage.task.phases):
            where = ("stages", index, "task", "phases", phase_index, "instructions")
            texts.append((where, phase.instructions))
        for item in stage.task.inputs:
            if own.setdefault(item.id, item) != item:
                raise LocatedValueError(
                    f"the task declares input {item.id!r} unlike the pipeline or an earlier "
                    "stage's task; declare it the same way everywhere, or rename one",
                    location=("stages", index, "task", "inputs"),
                )
    check_conditions(inputs, also=list(own.values()))
    if own:  # without inputs, {{ ... }} is literal text: nothing to check
        check_placeholders(inputs, texts, where="stage prompts or stage tasks", also_known=own)


DEFAULT_RETRY = 2
"""Feedback rounds a stage gets after its first failed check, unless ``on_fail`` says."""
MAX_RETRY = 20
"""The most feedback rounds ``on_fail.retry`` may ask for."""
DEFAULT_MAX_REVISIONS = 2
"""How many times, in the whole run, ``on_fail.back_to`` may send the pipeline back."""
MAX_REVISIONS = 50
"""The highest ``max_revisions`` a pipeline may set."""


class OnFail(BaseModel):
    """What happens when a stage's checks keep failing."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    retry: WholeNumber = Field(
        default=DEFAULT_RETRY,
        ge=0,
        le=MAX_RETRY,
        description="Feedback rounds after the first failure.",
    )
    back_to: str | None = Field(
        default=None,
        description="An earlier stage to revise, with this stage's failure as its feedback, "
        "once the retries are spent.",
    )


class Stage(WrittenAsSentences):
    """One stage: what to tell the agent, and what must hold before the next stage starts."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    sentence_field = "exit_when"

    name: str = Field(min_length=1, pattern=r"^\S(.*\S)?$", description="Unique in the pipeline.")
    prompt: str | None = Field(default=None, description="The stage's instructions.")
    prompt_file: str | None = Field(
        default=None, description="A file holding the instructions, relative to the pipeline."
    )
    task: Task | None = Field(
        default=None,
        description="A phased task (a task file, or inline) the stage runs with its own phases.",
    )
    exit_when: tuple[Check, ...] = Field(
        default=(),
        description="Checks that must all hold for the stage to be complete; a sentence "
        "('architecture.md exists and has >100 lines') may stand for checks "
        "(phasegate.phases.sentences).",
    )
    on_fail: OnFail = Field(default_factory=OnFail)
    protect: tuple[ProtectGlob, ...] = Field(
        default=(),
        description="Globs of paths, relative to the work directory, the agent must not change "
        "during this stage: a change under one fails the stage's exit check (see Task.protect).",
        # Left out of dumps when empty, so digests of pipelines saved before it existed match.
        exclude_if=lambda protect: not protect,
    )
    allow_tools: tuple[ToolName, ...] | None = Field(
        default=None,
        description="The only tools the agent may call while this is the current stage, by "
        "the runtime's names; any other call is refused before it runs. null: every tool.",
        # Left out of dumps when null, so digests of pipelines saved before it existed match.
        exclude_if=lambda allow_tools: allow_tools is None,
    )
    needs: tuple[str, ...] | None = Field(
        default=None,
        description="The stages this one waits for (before or after it in the file); null: "
        "the stage before it (the first stage: none); []: it starts at once. Stages whose "
        "needs are accepted run at the same time, each branch in its own session and work "
        "directory (see phasegate.phases.stage_graph).",
        # Left out of dumps when null, so digests of pipelines saved before it existed match.
        exclude_if=lambda needs: needs is None,
    )

    @field_validator("allow_tools", mode="before")
    @classmethod
    def _allowed_as_list(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value

    @field_validator("needs", mode="before")
    @classmethod
    def _needs_as_list(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value

    @field_validator("task", mode="before")
    @classmethod
    def _load_task(cls, value: object, info: ValidationInfo) -> object:
        base = base_dir(info)
        # Data from code may name files anywhere: its stage tasks too.
        root = files_root(info) or Path(base.resolve().anchor)
        try:
            if isinstance(value, str | Path):
                value = load_task(named_file(value, info, what="task file"), files_root=root)
            elif isinstance(value, dict):
                value = task_from_mapping(value, source=base / "<inline task>", files_root=root)
        except TaskFileError as exc:
            if exc.option is not None:
                raise OptionValueError(f"task {exc}", option=exc.option) from None
            raise ValueError(f"task {exc}") from None
        return value

    @field_validator("task")
    @classmethod
    def _task_fits_a_pipeline(cls, task: Task | None) -> Task | None:
        if task is None:
            return None
        if task.completion == "tool":
            raise ValueError(
                f"task {task.name!r} completes phases by tool; inside a pipeline phases "
                "complete by marker: set completion: marker (or either)"
            )
        if task.output_phase is not None and task.output_phase.structured_output:
            raise ValueError(
                f"task {task.name!r} asks for structured_output, which would end the pipeline's "
                "session; remove it (the JSON is still checked against output_schema)"
            )
        if task.on_reject != "keep":
            raise ValueError(
                f"task {task.name!r} sets on_reject: revert, which pipelines do not support; "
                "remove it"
            )
        if limited := [p.name for p in task.phases if p.allow_tools is not None]:
            raise ValueError(
                f"task {task.name!r} sets allow_tools on phase {', '.join(limited)}, which a "
                "pipeline does not enforce per phase: set allow_tools on the stage instead"
            )
        # In a pipeline phases complete by marker: no completion tools are offered.
        return task.model_copy(update={"completion": "marker"})

    @model_validator(mode="before")
    @classmethod
    def _read_prompt_file(cls, data: object, info: ValidationInfo) -> object:
        if not isinstance(data, dict) or not isinstance(data.get("prompt_file"), str):
            return data
        if data.get("prompt") is not None:
            raise ValueError("give prompt or prompt_file, not both")
        file = named_file(data["prompt_file"], info, what="prompt_file")
        try:
            text = read_text(file)
        except OSError as exc:
            raise ValueError(f"cannot read prompt_file {file}: {exc.strerror or exc}") from None
        except ParseProblem as exc:
            raise ValueError(f"prompt_file {file} {exc}") from None
        return {**data, "prompt": text}

    @model_validator(mode="after")
    def _has_work_and_a_check(self) -> Stage:
        if not (self.prompt or "").strip() and self.task is None:
            raise ValueError(f"stage {self.name!r} needs a prompt, a prompt_file or a task")
        if not self.exit_when and self.task is None:
            raise ValueError(
                f"stage {self.name!r} has nothing to check: add exit_when checks (or a task)"
            )
        return self


OnConflict = Literal["join", "fail"]
"""What a merge conflict at a join does: ``join`` hands it to the joining stage as a gate
issue naming the files and hunks; ``fail`` fails the pipeline."""
OnBranchFailure = Literal["stop", "finish"]
"""What a rejected branch does to the branches still running: ``stop`` stops them, ``finish``
lets them finish; either way the pipeline fails."""


def stage_checks(stage: Stage) -> tuple[Check, ...]:
    """Every check a stage runs: its ``exit_when``, then its task's and its phases'."""
    if stage.task is None:
        return stage.exit_when
    phases = tuple(check for phase in stage.task.phases for check in phase.checks)
    return (*stage.exit_when, *stage.task.checks, *phases)


class Pipeline(BaseModel):
    """Stages run by one agent, each gated on its exit checks: one after another, or (with
    ``needs``) independent stages at the same time, each branch in its own session."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, description="Pipeline name, used in reports and logs.")
    description: str | None = None
    stages: tuple[Stage, ...] = Field(min_length=1)
    max_revisions: WholeNumber = Field(
        default=DEFAULT_MAX_REVISIONS,
        ge=0,
        le=MAX_REVISIONS,
        description="How many times in one run a stage may send the pipeline back (back_to).",
    )
    inputs: tuple[TaskInput, ...] = Field(
        default=(),
        description="Values the stage prompts (and stage tasks) use as {{ id }}.",
    )
    toolset: tuple[ToolName, ...] | None = Field(
        default=None,
        description="The built-in tools the agent is offered in every session of the run, by "
        "the runtime's names; null: the runtime's default set (see Task.toolset).",
        # Left out of dumps when null, so digests of pipelines saved before it existed match.
        exclude_if=lambda toolset: toolset is None,
    )
    grader: GraderSettings | None = Field(
        default=None,
        description="How the grader of its rubric checks runs (model, max_turns, "
        "max_cost_usd; docs/grader.md). Not written: the caller's settings, then the defaults.",
        # Left out of dumps when not written, so digests of definitions saved before it match.
        exclude_if=lambda grader: grader is None,
    )
    sandbox: Sandbox | None = Field(
        default=None,
        description="Confine the agent in every session of the run (see Task.sandbox); the "
        "paths every stage protects are read-only for its commands.",
        # Left out of dumps when not written, so digests of definitions saved before it match.
        exclude_if=lambda sandbox: sandbox is None,
    )
    max_parallel: WholeNumber | None = Field(
        default=None,
        ge=1,
        description="The most stages that run at the same time; null: as many as the stages' "
        "needs allow.",
        # Left out of dumps when null, so digests of pipelines saved before it existed match.
        exclude_if=lambda max_parallel: max_parallel is None,
    )
    on_conflict: OnConflict = Field(
        default="join",
        description="A merge conflict at a join: join (a gate issue the joining stage "
        "resolves) or fail (the pipeline fails).",
        exclude_if=lambda on_conflict: on_conflict == "join",
    )
    on_branch_failure: OnBranchFailure = Field(
        default="stop",
        description="A rejected branch: stop the branches still running, or let them finish; "
        "the pipeline fails either way.",
        exclude_if=lambda on_branch_failure: on_branch_failure == "stop",
    )

    @field_validator("stages")
    @classmethod
    def _stages_are_consistent(cls, stages: tuple[Stage, ...]) -> tuple[Stage, ...]:
        names = [stage.name for stage in stages]
        refuse_repeated_names("stage", names)
        for stage in stages:
            target = stage.on_fail.back_to
            if target is None:
                continue
            if target not in names:
                raise ValueError(
                    f"stage {stage.name!r}: on_fail.back_to names {target!r}, which is not a "
                    f"stage; stages: {', '.join(names)}"
                )
        # needs, cycles, and back_to within a branch (an earlier stage of the same branch)
        StageGraph.of_stages(stages)
        return stages

    @model_validator(mode="after")
    def _toolset_allows_every_stage(self) -> Pipeline:
        if self.toolset is None:
            return self
        refuse_repeated_names("tool", list(self.toolset))
        offered = set(self.toolset)
        for stage in self.stages:
            if stage.task is not None and stage.task.toolset is not None:
                raise ValueError(
                    f"stage {stage.name!r}: its task names a toolset, but a pipeline's stages "
                    "share their sessions: name the tools in the pipeline's toolset instead"
                )
            needs = [check.tools for check in stage.exit_when if isinstance(check, ToolsUsed)]
            if stage.task is not None:
                needs += [p.require_tools for p in stage.task.phases if p.require_tools]
            for tools in needs:
                if not offered & set(tools):
                    raise ValueError(
                        f"stage {stage.name!r} requires {' or '.join(tools)}, which the "
                        "toolset does not offer: add one of them to toolset"
                    )
            if unoffered := [t for t in stage.allow_tools or () if t not in offered]:
                raise ValueError(
                    f"stage {stage.name!r} allows {', '.join(unoffered)}, which the toolset "
                    "does not offer: add them to toolset, or drop them from allow_tools"
                )
        return self

    @model_validator(mode="after")
    def _placeholders_name_inputs(self) -> Pipeline:
        check_pipeline_inputs(self.inputs, self.stages)
        return self

    @model_serializer(mode="wrap")
    def _inputs_only_when_declared(self, handler: SerializerFunctionWrapHandler) -> Any:
        # As for Task: a pipeline without inputs keeps the digest it had before inputs.
        return drop_empty_inputs(handler(self), self.inputs)

    @property
    def kind(self) -> DefinitionKind:
        """``"pipeline"`` (a :class:`~phasegate.Task` says ``"task"``)."""
        return "pipeline"

    @property
    def all_inputs(self) -> tuple[TaskInput, ...]:
        """The pipeline's inputs, then those its stage tasks declare (each id once)."""
        return all_inputs(self.inputs, self.stages)

    def index_of(self, name: str) -> int:
        """The 0-based position of the stage called ``name``."""
        for index, stage in enumerate(self.stages):
            if stage.name == name:
                return index
        raise ValueError(f"no stage named {name!r}; stages: {', '.join(self.stage_names)}")

    @property
    def max_checks(self) -> int:
        """The most stage checks one run can make: every stage visited once more per allowed
        revision (when a stage can go back), each visit with all its feedback rounds. Each
        check that does not end the run answers a stop with an instruction (feedback, or the
        next stage's prompt)."""
        per_visit = sum(stage.on_fail.retry + 1 for stage in self.stages)
        revisable = any(stage.on_fail.back_to is not None for stage in self.stages)
        return ((self.max_revisions if revisable else 0) + 1) * per_visit

    @property
    def graph(self) -> StageGraph:
        """The stages as a graph: what each needs, the levels, the branches."""
        return StageGraph.of(self)

    @property
    def stage_names(self) -> tuple[str, ...]:
        """The stages' names, in order."""
        return tuple(stage.name for stage in self.stages)

    def digest(self) -> str:
        """A fingerprint of the definition, prompts and checks included (the SHA-256 of its
        canonical JSON, as for a task): a resumed run must continue the pipeline it
        started."""
        return json_digest(self.model_dump(mode="json", by_alias=True))


def load_pipeline(path: str | Path, *, files_root: str | Path | None = None) -> Pipeline:
    """Read a pipeline file; ``prompt_file``, ``task`` and schema paths are relative to it.

    Every file it names (prompt files, stage task files and the files those name, schema
    files and their ``$ref`` s) must lie inside ``files_root``, by default the pipeline
    file's folder (symlinks resolved).

    Raises :class:`~phasegate.errors.PipelineFileError` naming the file and the field
    (``stages.1.exit_when.0.min_lines.n``) for any problem, a stage's task file included;
    for a named file outside ``files_root`` its ``option`` is ``files_root``.
    """
    file = Path(path)
    return pipeline_from_file_data(file, read_mapping(file, PipelineFileError), files_root)


def pipeline_from_file_data(
    file: Path, data: Mapping[str, Any], files_root: str | Path | None = None
) -> Pipeline:
    """:func:`load_pipeline` for a file already read into ``data``."""
    if "phases" in data and "stages" not in data:
        raise PipelineFileError(
            file,
            None,
            "is a task file (it has phases:), not a pipeline file; a pipeline file has "
            "stages:, and a stage may run this task (task: <path>)",
        )
    return pipeline_from_mapping(data, source=file, files_root=files_root or file.parent)


def pipeline_from_mapping(
    data: Mapping[str, Any],
    *,
    source: Path | None = None,
    files_root: str | Path | None = None,
    base_dir: str | Path | None = None,
) -> Pipeline:
    """Build a pipeline from already-parsed data; ``source`` (the file) names it in errors.

    Paths in the data are relative to ``base_dir`` (default: ``source``'s folder, or the
    working directory without one); files they name must lie inside ``files_root``
    (default: ``source``'s folder, or anywhere for data without a source).
    """
    context = loading_context(source, files_root, base_dir)
    return validate_model(Pipeline, data, path=source, error=PipelineFileError, context=context)
