"""A pipeline stage's exit checks (``exit_when``): what must hold before the next stage.

A check is a mapping with one key, its kind: ``file_exists``, ``min_lines``, ``json_valid``,
``command``, ``changed``, ``tools_used``, ``dir_files``, ``said`` or ``rubric``; its value
is the settings, or for most kinds the one setting that matters (``file_exists: a.md``,
``command: [make, test]``, ``said: DONE``, ``rubric: design.md names every endpoint``).
A ``rubric`` holds criteria only a reader can judge: a grader reads the evidence and gives a
verdict per criterion (docs/grader.md). Paths and globs are relative to the work
directory and may not leave it. Judging them is :mod:`phasegate.validators.stage_checks`' job;
:func:`check_as_file` writes a check back in its file form.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationInfo,
    field_validator,
    model_validator,
)

from phasegate._files import Number, WholeNumber
from phasegate.phases.promises import (
    CLOSE_TAG,
    OPEN_TAG,
    code_point,
    invisible_characters,
    normalize_promise,
    visible,
)
from phasegate.phases.schemas import load_schema
from phasegate.phases.workdir_paths import WorkdirPath

COMMAND_TIMEOUT_SECONDS = 120.0
"""How long a check's command may run, unless the check says."""
MAX_COMMAND_TIMEOUT_SECONDS = 86_400
"""The longest timeout a check's command may ask for: one day."""


class _Check(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FileExists(_Check):
    """The file exists (and is a file)."""

    kind: Literal["file_exists"] = "file_exists"
    path: WorkdirPath


class MinLines(_Check):
    """The file exists and has at least ``n`` lines."""

    kind: Literal["min_lines"] = "min_lines"
    path: WorkdirPath
    n: WholeNumber = Field(ge=1)


class JsonValid(_Check):
    """The file holds JSON, valid against ``schema`` when one is given."""

    kind: Literal["json_valid"] = "json_valid"
    path: WorkdirPath
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")

    model_config = ConfigDict(populate_by_name=True)  # merged with _Check's

    @field_validator("schema_", mode="before")
    @classmethod
    def _load_schema(cls, value: object, info: ValidationInfo) -> object:
        return load_schema(value, info)


class CommandCheck(_Check):
    """``argv`` run in the work directory, without a shell, exits with ``exit_code`` within
    ``timeout`` seconds."""

    kind: Literal["command"] = "command"
    argv: tuple[str, ...] = Field(min_length=1)
    exit_code: WholeNumber = Field(default=0, ge=0, le=255)
    """What a process can exit with: a negative code would match a command killed by a
    signal (Python's ``-9``), one past 255 could never be matched."""
    timeout: Number = Field(default=COMMAND_TIMEOUT_SECONDS, gt=0, le=MAX_COMMAND_TIMEOUT_SECONDS)

    @field_validator("argv")
    @classmethod
    def _program_named(cls, argv: tuple[str, ...]) -> tuple[str, ...]:
        if not argv[0].strip():
            raise ValueError("the first item (the program) must not be empty")
        return argv


class Changed(_Check):
    """At least one file matching ``glob`` was added or modified during the stage."""

    kind: Literal["changed"] = "changed"
    glob: WorkdirPath


class ToolsUsed(_Check):
    """At least one successful call of any of ``tools`` during the stage (the phase
    validators' ``require_tools`` rule, for the whole stage)."""

    kind: Literal["tools_used"] = "tools_used"
    tools: tuple[str, ...] = Field(min_length=1)


class DirFiles(_Check):
    """The directory exists and holds at least ``min`` files, counted in its subdirectories
    too, skipping what workspace snapshots skip (``.git``, ``node_modules``, virtual
    environments, what git ignores). ``min: 0`` asks only that the directory exists."""

    kind: Literal["dir_files"] = "dir_files"
    path: WorkdirPath
    min: WholeNumber = Field(default=1, ge=0, le=1_000_000)


class Said(_Check):
    """The agent said ``<promise>TEXT</promise>`` in its own text during the stage, as
    prose (:mod:`phasegate.phases.promises`); ``text`` is compared whitespace-normalised."""

    kind: Literal["said"] = "said"
    text: str = Field(max_length=1000)

    @field_validator("text")
    @classmethod
    def _a_promise(cls, value: str) -> str:
        return promise_text(value)


def promise_text(value: str) -> str:
    """``value`` as a promise's text: whitespace-normalised; a ValueError when it is empty or
    holds the tags (they belong to the agent's reply)."""
    text = normalize_promise(value)
    if not text:
        raise ValueError("the promise must not be empty")
    if OPEN_TAG in text or CLOSE_TAG in text:
        raise ValueError(f"give the promise's text without the {OPEN_TAG} tags")
    hidden = invisible_characters(text)
    if hidden:
        raise ValueError(
            f"the promise holds an invisible character, {', '.join(map(code_point, hidden))} "
            f"(escaped here: {visible(text)}): a promise the agent says would look the same "
            "and never match it; remove the character"
        )
    return text


_CRITERION_ID = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
MAX_CRITERIA = 20
"""The most criteria one rubric may hold: each is a verdict the grader must give."""


class Criterion(_Check):
    """One criterion of a :class:`Rubric`: a sentence a reader can judge true or not from
    the evidence (``design.md names every endpoint prd.md lists``), with an optional ``id``
    that names it in verdicts and reports (default: ``c1``, ``c2``, ... by its place)."""

    id: str | None = Field(default=None, pattern=_CRITERION_ID)
    text: str = Field(min_length=1, max_length=2000)

    @model_validator(mode="before")
    @classmethod
    def _bare_sentence(cls, value: object) -> object:
        return {"text": value} if isinstance(value, str) else value

    @field_validator("text")
    @classmethod
    def _said_something(cls, value: str) -> str:
        text = " ".join(value.split())
        if not text:
            raise ValueError("a criterion must say something")
        return text


class Rubric(_Check):
    """Criteria a grader judges from the evidence (docs/grader.md): a separate session with
    no writing tool gives each a verdict, met, not met or cannot tell, with its reason; the
    check holds when every criterion is met. It is judged only once the other checks of its
    list hold."""

    kind: Literal["rubric"] = "rubric"
    criteria: tuple[Criterion, ...] = Field(min_length=1, max_length=MAX_CRITERIA)

    @field_validator("criteria", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return [value] if isinstance(value, str | dict) else value

    @model_validator(mode="after")
    def _ids_unique(self) -> Rubric:
        ids = self.ids
        repeated = sorted({name for name in ids if ids.count(name) > 1})
        if repeated:
            raise ValueError(f"criterion ids must differ; repeated: {', '.join(repeated)}")
        return self

    @property
    def ids(self) -> tuple[str, ...]:
        """Each criterion's id: its own, or ``c`` and its 1-based place."""
        return tuple(
            criterion.id or f"c{place}" for place, criterion in enumerate(self.criteria, 1)
        )


CHECK_KINDS = (
    "file_exists",
    "min_lines",
    "json_valid",
    "command",
    "changed",
    "tools_used",
    "dir_files",
    "said",
    "rubric",
)
# The field a bare value stands for: `file_exists: a.md`, `command: [make, test]`.
_SHORT_FIELD = {
    "file_exists": "path",
    "changed": "glob",
    "command": "argv",
    "tools_used": "tools",
    "json_valid": "path",
    "dir_files": "path",
    "said": "text",
    "rubric": "criteria",
}


def _check_from_file(value: object) -> object:
    """``{kind: settings}`` (the file form) → ``{"kind": kind, **settings}``."""
    if not isinstance(value, dict) or "kind" in value:
        return value
    if len(value) != 1:
        keys = ", ".join(map(str, value)) or "none"
        raise ValueError(
            f"a check is a mapping with exactly one key, its kind (one of: "
            f"{', '.join(CHECK_KINDS)}); found keys: {keys}"
        )
    ((kind, settings),) = value.items()
    if kind not in CHECK_KINDS:
        raise ValueError(f"unknown check {kind!r}; expected one of: {', '.join(CHECK_KINDS)}")
    if isinstance(settings, dict):
        if settings.get("kind", kind) != kind:
            raise ValueError(f"check {kind!r} cannot set kind: {settings['kind']!r}")
        return {**settings, "kind": kind}
    if kind in _SHORT_FIELD:
        return {"kind": kind, _SHORT_FIELD[kind]: settings}
    raise ValueError(f"check {kind!r} needs a mapping of settings")


Check = Annotated[
    FileExists
    | MinLines
    | JsonValid
    | CommandCheck
    | Changed
    | ToolsUsed
    | DirFiles
    | Said
    | Rubric,
    Field(discriminator="kind"),
    BeforeValidator(_check_from_file),
]
"""One exit check of a stage."""


def check_from_text(text: str) -> Check:
    """One check written on one line, ``KIND: VALUE`` (``said: DONE``, ``file_exists: a.md``,
    ``command: pytest -q``, ``min_lines: {path: a.md, n: 3}``): the value is read as YAML, as
    in a pipeline file, and a ``command`` given as one string is split as a shell would split
    it (no shell runs it). A :class:`ValueError` says what is wrong."""
    from phasegate._files import ParseProblem
    from phasegate._files.parsing import parse_data

    kind, colon, value = text.partition(":")
    kind = kind.strip()
    if not colon or kind not in CHECK_KINDS:
        raise ValueError(
            f"{text!r} is not a check: write KIND: VALUE, KIND one of {', '.join(CHECK_KINDS)} "
            "(for example 'command: pytest -q' or 'said: DONE')"
        )
    given = value.strip()
    if kind in ("command", "said", "rubric") and not given.startswith(("[", "{")):
        settings: object = given  # as typed: a promise, a criterion, words a shell would split
    else:
        try:
            settings = parse_data(given, json_syntax=False) if given else None
        except ParseProblem as exc:
            raise ValueError(f"{text!r}: its value {exc}") from None
    if kind == "command" and isinstance(settings, str):
        import shlex

        try:
            settings = shlex.split(settings)
        except ValueError as exc:
            raise ValueError(f"{text!r}: the command {exc}") from None
    return check_from_data({kind: settings}, text=text)


def check_from_data(data: object, *, text: str) -> Check:
    """The check ``data`` (its file form, ``{kind: settings}``) stands for, built through the
    model a file's checks go through; a :class:`ValueError` quoting ``text`` (what the user
    wrote) names what is wrong."""
    from pydantic import ValidationError

    try:
        return _check_adapter().validate_python(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"][1:])
        problem = str(first["msg"]).removeprefix("Value error, ")
        raise ValueError(f"{text!r}: {where + ': ' if where else ''}{problem}") from None


@cache
def _check_adapter() -> TypeAdapter[Check]:
    return TypeAdapter(Check)


def has_rubric(checks: Sequence[Check]) -> bool:
    """Whether any of ``checks`` is a ``rubric`` (a grader is needed to judge them)."""
    return any(isinstance(check, Rubric) for check in checks)


def check_as_file(check: Check) -> dict[str, Any]:
    """``check`` as a pipeline file writes it: ``{kind: settings}``, or ``{kind: value}``
    when its only setting that differs from the default is the one a bare value stands for
    (a rubric of one criterion without an id: ``{rubric: SENTENCE}``)."""
    settings = check.model_dump(mode="json", by_alias=True, exclude={"kind"}, exclude_defaults=True)
    if isinstance(check, Rubric):  # a criterion without an id is its sentence
        criteria = [
            c.text if c.id is None else {"id": c.id, "text": c.text} for c in check.criteria
        ]
        settings["criteria"] = criteria[0] if criteria == [check.criteria[0].text] else criteria
    short = _SHORT_FIELD.get(check.kind)
    if short is not None and set(settings) == {short}:
        return {check.kind: settings[short]}
    return {check.kind: settings}
