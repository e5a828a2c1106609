"""What a phased task is: :class:`Task` and :class:`Phase`.

A task is an ordered list of phases. *Work phases* end with a marker line
(:mod:`phasegate.phases.markers`) and may require tool calls and file changes. At most one
*output phase* (a phase with an ``output_schema``) may exist; it comes last, has no marker and
is complete when the agent prints JSON that satisfies the schema.
"""

from __future__ import annotations

from collections import Counter
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    StringConstraints,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)

from phasegate._files.digests import json_digest
from phasegate.modes import DefinitionKind
from phasegate.phases.checks import Check
from phasegate.phases.completion import Completion
from phasegate.phases.conditions import check_conditions
from phasegate.phases.grader import GraderSettings
from phasegate.phases.inputs import TaskInput
from phasegate.phases.placeholders import check_placeholders, refuse_repeated_ids
from phasegate.phases.sandbox import Sandbox
from phasegate.phases.schemas import load_schema
from phasegate.phases.sentences import WrittenAsSentences
from phasegate.phases.workdir_paths import ProtectGlob

DEFAULT_MARKER_TEXT = "done"

OnReject = Literal["keep", "revert"]
"""What happens to the work directory when a run is not accepted."""


ToolName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9_]*$", max_length=200)]
"""A tool's name as the agent runtime spells it (``Read``, ``Bash``, ``mcp__server__tool``)."""


class Phase(WrittenAsSentences):
    """One phase of a task.

    Work phase: ``instructions`` plus optional evidence requirements. Output phase: set
    ``output_schema`` (a JSON Schema dict, a path to a schema file, or a pydantic model
    class); its JSON is accepted only if it validates.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, description="Short name, unique in the task.")
    instructions: str = Field(min_length=1, description="What the agent does in this phase.")
    marker: str = Field(
        default=DEFAULT_MARKER_TEXT,
        min_length=1,
        description='Text the agent prints after "PHASE <n> COMPLETE:" (work phases only).',
    )
    require_tools: tuple[str, ...] = Field(
        default=(),
        description="At least one successful call of any of these tools, inside this phase.",
    )
    require_changes: bool = Field(
        default=False, description="Files on disk must change during this phase."
    )
    output_schema: dict[str, Any] | None = Field(
        default=None, description="JSON Schema the phase's JSON must satisfy (output phase)."
    )
    claims_files: str | None = Field(
        default=None,
        description="Name of the JSON field that lists the files the agent says it changed.",
    )
    structured_output: bool = Field(
        default=False,
        description="Also ask the agent runtime for schema-constrained output (Claude Code's "
        "output_format): the answer may then come as its StructuredOutput call.",
    )
    allow_tools: tuple[ToolName, ...] | None = Field(
        default=None,
        description="The only tools the agent may call while this is the current phase (the "
        "first one not yet claimed complete), by the runtime's names; any other call is "
        "refused before it runs. phasegate's completion tools are always allowed. null: every "
        "tool.",
        # Left out of dumps when null, so digests of tasks saved before it existed match.
        exclude_if=lambda allow_tools: allow_tools is None,
    )
    checks: tuple[Check, ...] = Field(
        default=(),
        description="Proof that the phase's work is right: the checks a pipeline stage's "
        "exit_when takes (command, file_exists, min_lines, json_valid, changed, tools_used, "
        "dir_files, said), run by the gate whenever the phase's other evidence holds, and "
        "again on the final disk before the run is accepted. changed, tools_used and said "
        "look at this phase only.",
        # Left out of dumps when empty, so digests of tasks saved before it existed match.
        exclude_if=lambda checks: not checks,
    )

    @property
    def is_output(self) -> bool:
        """True for the output phase (the one that answers with JSON)."""
        return self.output_schema is not None

    @field_validator("marker")
    @classmethod
    def _marker_is_one_line(cls, value: str) -> str:
        if "\n" in value.strip():
            raise ValueError("the marker text must fit on one line")
        return value.strip()

    @field_validator("require_tools", "allow_tools", mode="before")
    @classmethod
    def _tools_as_list(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value

    @field_validator("output_schema", mode="before")
    @classmethod
    def _load_schema(cls, value: object, info: ValidationInfo) -> object:
        if isinstance(value, type) and issubclass(value, BaseModel):
            value = value.model_json_schema()
        elif value is not None and not isinstance(value, dict | str | Path):
            raise ValueError(
                "expected a JSON Schema object, a path to a schema file, or a pydantic model class"
            )
        return load_schema(value, info)

    @model_validator(mode="after")
    def _output_fields_only_on_output_phase(self) -> Phase:
        if self.claims_files is not None and self.output_schema is None:
            raise ValueError("claims_files needs an output_schema (it names a field of the JSON)")
        if self.structured_output and self.output_schema is None:
            raise ValueError("structured_output needs an output_schema (the schema to constrain)")
        if self.output_schema is not None and (self.require_tools or self.require_changes):
            raise ValueError(
                "an output phase only prints JSON: move require_tools/require_changes "
                "to a work phase before it"
            )
        if self.allow_tools is not None:
            refuse_repeated_names("tool", list(self.allow_tools))
            if self.require_tools and not set(self.require_tools) & set(self.allow_tools):
                raise ValueError(
                    f"the phase requires {' or '.join(self.require_tools)}, which its "
                    "allow_tools does not allow: add one of them to allow_tools"
                )
        return self


READ_ONLY_TOOLSET = ("Read", "Grep", "Glob")
"""The tools a ``read_only`` task is offered unless its ``toolset`` names fewer (Claude Code's
names of its tools that only read)."""


class Task(WrittenAsSentences):
    """A phased task: a name, an optional description and ordered phases."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, description="Task name, used in reports and logs.")
    description: str | None = Field(default=None, description="The goal, in one or two lines.")
    phases: tuple[Phase, ...] = Field(min_length=1, description="The phases, in order.")
    completion: Completion = Field(
        default="either",
        description="How a phase is marked complete: marker line, completion tool, or either.",
    )
    on_reject: OnReject = Field(
        default="keep",
        description="revert: a run that is not accepted restores the work directory.",
    )
    allow_reads_outside: bool = Field(
        default=True,
        description="Reading files outside the work directory is a finding; false fails the "
        "gate instead (path_outside_workdir). Changing files outside it always fails.",
    )
    read_only: bool = Field(
        default=False,
        description="The agent may only look: it is offered reading tools only, and any change "
        "on disk fails the gate (read_only_violated).",
        # Left out of dumps when false, so digests of tasks saved before it existed match.
        exclude_if=lambda read_only: not read_only,
    )
    toolset: tuple[ToolName, ...] | None = Field(
        default=None,
        description="The built-in tools the agent is offered, by the runtime's names (Read, "
        "Edit, Bash, ...); null: the runtime's default set. Every tool's definition is sent "
        "with every request of a run, so fewer tools cost fewer input tokens. phasegate's "
        "completion tools are offered whatever this says.",
        # Left out of dumps when null, so digests of tasks saved before it existed match.
        exclude_if=lambda toolset: toolset is None,
    )
    inputs: tuple[TaskInput, ...] = Field(
        default=(),
        description="Values the instructions use as {{ id }}: inferred, asked, or given.",
    )
    protect: tuple[ProtectGlob, ...] = Field(
        default=(),
        description="Globs of paths, relative to the work directory, the agent must not "
        "change: a write tool naming one is refused, and any change under one on disk fails "
        "the gate (protected_path_changed), whatever made it. A glob that matches a folder "
        "protects everything in it (tests and tests/** both protect tests/a.py).",
        # Left out of dumps when empty, so digests of tasks saved before it existed match.
        exclude_if=lambda protect: not protect,
    )
    sandbox: Sandbox | None = Field(
        default=None,
        description="Confine the agent (docs/sandbox.md): on, off, optional, or {mode, "
        "network: [hosts]}. Its commands write only in the work directory and never under "
        "protect, and reach only the listed hosts; its file tools are refused outside the work "
        "directory. Not written: the caller's default.",
        # Left out of dumps when not written, so digests of definitions saved before it match.
        exclude_if=lambda sandbox: sandbox is None,
    )
    grader: GraderSettings | None = Field(
        default=None,
        description="How the grader of its rubric checks runs (model, max_turns, "
        "max_cost_usd; docs/grader.md). Not written: the caller's settings, then the defaults.",
        # Left out of dumps when not written, so digests of definitions saved before it match.
        exclude_if=lambda grader: grader is None,
    )
    checks: tuple[Check, ...] = Field(
        default=(),
        description="Checks of the task as a whole, run on the final disk when every phase "
        "is otherwise accepted; changed, tools_used and said look at the whole run.",
        # Left out of dumps when empty, so digests of tasks saved before it existed match.
        exclude_if=lambda checks: not checks,
    )

    @field_validator("phases")
    @classmethod
    def _phases_are_consistent(cls, phases: tuple[Phase, ...]) -> tuple[Phase, ...]:
        refuse_repeated_names("phase", [phase.name for phase in phases])
        for position, phase in enumerate(phases[:-1]):
            if phase.is_output:
                raise ValueError(
                    f"phase {position + 1} ({phase.name}) has an output_schema but is not last: "
                    "the output phase must be the last phase"
                )
        return phases

    @model_validator(mode="after")
    def _toolset_allows_the_work(self) -> Task:
        if self.toolset is None:
            return self
        refuse_repeated_names("tool", list(self.toolset))
        if self.read_only and (writing := [t for t in self.toolset if t not in READ_ONLY_TOOLSET]):
            raise ValueError(
                f"toolset names {', '.join(writing)}, but a read_only task is offered reading "
                f"tools only ({', '.join(READ_ONLY_TOOLSET)}): drop them, or read_only"
            )
        for position, phase in enumerate(self.phases, start=1):
            if phase.require_tools and not set(phase.require_tools) & set(self.toolset):
                raise ValueError(
                    f"phase {position} ({phase.name}) requires {' or '.join(phase.require_tools)}"
                    f", which the toolset does not offer: add one of them to toolset"
                )
            unoffered = [t for t in phase.allow_tools or () if t not in self.toolset]
            if unoffered:
                raise ValueError(
                    f"phase {position} ({phase.name}) allows {', '.join(unoffered)}, which the "
                    "toolset does not offer: add them to toolset, or drop them from allow_tools"
                )
        return self

    @property
    def offered_tools(self) -> tuple[str, ...] | None:
        """The tools the agent is offered: the ``toolset``, the reading tools for a
        ``read_only`` task without one, or None (the runtime's default set)."""
        if self.toolset is None and self.read_only:
            return READ_ONLY_TOOLSET
        return self.toolset

    @model_validator(mode="after")
    def _placeholders_name_inputs(self) -> Task:
        refuse_repeated_ids(self.inputs)
        check_conditions(self.inputs)
        if self.inputs:  # without inputs, {{ ... }} is literal text: nothing to check
            texts = [
                (("phases", i, "instructions"), p.instructions) for i, p in enumerate(self.phases)
            ]
            check_placeholders(self.inputs, texts, where="instructions of a phase")
        return self

    @model_serializer(mode="wrap")
    def _inputs_only_when_declared(self, handler: SerializerFunctionWrapHandler) -> Any:
        # A task without inputs dumps as it did before inputs existed, so digests of
        # definitions saved earlier (pipeline state, batch units) still match.
        return drop_empty_inputs(handler(self), self.inputs)

    @property
    def kind(self) -> DefinitionKind:
        """``"task"`` (a :class:`~phasegate.Pipeline` says ``"pipeline"``)."""
        return "task"

    @property
    def all_inputs(self) -> tuple[TaskInput, ...]:
        """The inputs the task declares (a pipeline adds its stage tasks' inputs)."""
        return self.inputs

    def digest(self) -> str:
        """A fingerprint of everything the task says, as loaded (the SHA-256 of its canonical
        JSON, as for a pipeline): a plan, a kept result or a batch unit made for another
        definition does not match."""
        return json_digest(self.model_dump(mode="json", by_alias=True))

    @property
    def output_phase(self) -> Phase | None:
        """The output phase, or None when the task only has work phases."""
        return self.phases[-1] if self.phases[-1].is_output else None

    @property
    def work_phases(self) -> tuple[Phase, ...]:
        """The phases that end with a marker, in order."""
        return tuple(phase for phase in self.phases if not phase.is_output)

    def index_of(self, phase: Phase) -> int:
        """The 1-based index of ``phase``: the number its marker carries.

        Found by identity in a map built once per task, so numbering every phase stays
        linear; a phase equal to one of the task's (a copy) is found by comparison.
        """
        phases, numbers = self._phase_numbers
        if phases is not self.phases:  # a model_copy that replaced the phases keeps the map
            phases, numbers = self.__dict__["_phase_numbers"] = _numbered(self.phases)
        number = numbers.get(id(phase))
        return number if number is not None else self.phases.index(phase) + 1

    @cached_property
    def _phase_numbers(self) -> tuple[tuple[Phase, ...], dict[int, int]]:
        return _numbered(self.phases)


def unguarded_oracles(task: Task) -> list[str]:
    """Warnings for command checks the agent could make pass by changing what they run: a
    task that runs a command check and protects nothing (the tests and the files that
    configure them are the author's oracle, and ``protect`` keeps them out of reach)."""
    if task.protect:
        return []
    owners = [(f"phase {task.index_of(p)} ({p.name})", p.checks) for p in task.phases]
    owners.append(("the task", task.checks))
    warnings = []
    for owner, checks in owners:
        commands = [check for check in checks if check.kind == "command"]
        if commands:
            warnings.append(
                f"{owner} runs a command check ({' '.join(commands[0].argv)}) and the task "
                "protects nothing: the agent could change the tests, or the files that "
                "configure them, until it passes; list them under protect"
            )
    return warnings


def _numbered(phases: tuple[Phase, ...]) -> tuple[tuple[Phase, ...], dict[int, int]]:
    """``phases`` with the 1-based number of each, by identity."""
    return phases, {id(phase): number for number, phase in enumerate(phases, start=1)}


def drop_empty_inputs(data: Any, inputs: tuple[TaskInput, ...]) -> Any:
    """``data`` (a model's dump) without its ``inputs`` key when there are none."""
    if not inputs and isinstance(data, dict):
        data.pop("inputs", None)
    return data


def refuse_repeated_names(kind: str, names: list[str]) -> None:
    """A ValueError naming the repeated ones, when ``names`` (of phases, stages) repeat."""
    repeated = sorted(name for name, count in Counter(names).items() if count > 1)
    if repeated:
        raise ValueError(f"{kind} names must be unique; repeated: {', '.join(repeated)}")
