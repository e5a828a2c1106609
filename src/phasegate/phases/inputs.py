"""What a task may ask for: :class:`TaskInput`, its options and its inference rules.

A task or pipeline declares ``inputs``; its instructions and stage prompts use each value as
``{{ id }}`` (:mod:`phasegate.phases.placeholders`)::

    inputs:
      - id: ci
        question: Which CI service should run the tests?
        header: CI service            # at most 12 characters
        type: choice                  # choice | multi_choice | text
        options:
          - {label: GitHub Actions, description: .github/workflows}
          - {label: GitLab CI, description: .gitlab-ci.yml}
        infer:                        # tried in order; the first that gives a valid value wins
          - {file_exists: .github/workflows/*.yml, value: GitHub Actions}
          - {file_exists: .gitlab-ci.yml, value: GitLab CI}
      - id: language
        question: Which language is the project written in?
        header: Language
        infer: [{detect: language}]
      - id: runner
        question: Which GitHub Actions runner?
        header: Runner
        ask_when: {ci: GitHub Actions}   # asked only for that answer (phases/conditions.py)

An inference rule is a mapping with one key, its kind: ``file_exists`` (a glob),
``file_value`` (a dotted key in a JSON, TOML or YAML file), ``git`` (``branch`` or
``remote_url``), ``env`` (a variable), ``context`` (a dotted key of the context) or
``detect`` (the built-in detector: ``language``, ``languages``, ``tools``). ``value`` replaces
what the rule read when it holds. Evaluating rules is :mod:`phasegate.planning.inference`'s
job; values are data, never evaluated.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from phasegate.phases.placeholder_values import placeholder_problem
from phasegate.phases.workdir_paths import WorkdirPath

MAX_HEADER = 12
"""The most characters a question's header may have (Claude Code's AskUserQuestion limit)."""
MAX_OPTIONS = 12
"""The most options a choice or a multi_choice lists (a single choice's ``Other (specify)``
not counted). Claude Code's ``AskUserQuestion`` shows at most 4 a question; a question with
more is relayed in two steps (:mod:`phasegate.planning.ask_user_question`)."""
OTHER_LABEL = "Other (specify)"
"""The option every single choice ends with; choosing it asks ``<id>__other`` as free text."""
OTHER_SUFFIX = "__other"
"""Appended to a single choice's id for the free-text answer that goes with "Other"."""
InputType = Literal["choice", "multi_choice", "text"]
"""How an input is answered: one option, one or more options, or free text."""
_ID = r"[A-Za-z][A-Za-z0-9_]*"


class InputOption(BaseModel):
    """One option of a choice: the label answered, and what it means."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str = Field(min_length=1, max_length=200)
    description: str = Field(default="", max_length=1000)

    @field_validator("label")
    @classmethod
    def _concrete_label(cls, label: str) -> str:
        problem = placeholder_problem(label)
        if problem is not None:
            raise ValueError(f"the label {problem}")
        if label.strip() != label:
            raise ValueError("the label must not start or end with spaces")
        if label == OTHER_LABEL:
            raise ValueError(f"{OTHER_LABEL!r} is added to every single choice; do not list it")
        return label


class _Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    value: str | None = Field(default=None, description="The value to use when the rule holds.")


class FileExistsRule(_Rule):
    """Holds when a file matching ``glob`` exists; its value is the first such path (sorted)."""

    kind: Literal["file_exists"] = "file_exists"
    glob: WorkdirPath


class FileValueRule(_Rule):
    """The value at dotted ``key`` (``project.name``, ``jobs.0``) in a JSON, TOML or YAML
    file, chosen by its suffix."""

    kind: Literal["file_value"] = "file_value"
    path: WorkdirPath
    key: str = Field(min_length=1)


class GitRule(_Rule):
    """A fact of the work directory's git repository: its branch or a remote's URL."""

    kind: Literal["git"] = "git"
    fact: Literal["branch", "remote_url"]
    remote: str = Field(default="origin", pattern=r"^[A-Za-z0-9._/-]+$")


class EnvRule(_Rule):
    """The environment variable ``name``, when it is set and not empty."""

    kind: Literal["env"] = "env"
    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")


class ContextRule(_Rule):
    """The value at dotted ``key`` of the context the caller passed."""

    kind: Literal["context"] = "context"
    key: str = Field(min_length=1)


class DetectRule(_Rule):
    """The built-in detector: the main ``language``, all ``languages``, or ``tools``."""

    kind: Literal["detect"] = "detect"
    what: Literal["language", "languages", "tools"]


RULE_KINDS = ("file_exists", "file_value", "git", "env", "context", "detect")
_SHORT_FIELD = {
    "file_exists": "glob",
    "git": "fact",
    "env": "name",
    "context": "key",
    "detect": "what",
}


def _rule_from_file(value: object) -> object:
    """``{kind: settings, value: V}`` (the file form) → ``{"kind": kind, ..., "value": V}``."""
    if not isinstance(value, dict) or "kind" in value:
        return value
    kinds = [key for key in value if key in RULE_KINDS]
    others = sorted(str(key) for key in value if key not in RULE_KINDS and key != "value")
    if len(kinds) != 1 or others:
        raise ValueError(
            f"an infer rule has exactly one kind key (one of: {', '.join(RULE_KINDS)}) and "
            f"optionally value; found keys: {', '.join(map(str, value)) or 'none'}"
        )
    kind = kinds[0]
    settings = value[kind]
    extra = {"value": value["value"]} if "value" in value else {}
    if isinstance(settings, dict):
        return {**settings, **extra, "kind": kind}
    if kind in _SHORT_FIELD:
        return {"kind": kind, _SHORT_FIELD[kind]: settings, **extra}
    raise ValueError(f"infer rule {kind!r} needs a mapping of settings")


def _conditions_from_file(value: object) -> object:
    """``{id: value}`` or ``{id: [values]}`` (the file form) → ``{id: (values,)}``."""
    if not isinstance(value, dict):
        return value
    return {key: [wanted] if isinstance(wanted, str) else wanted for key, wanted in value.items()}


InferRule = Annotated[
    FileExistsRule | FileValueRule | GitRule | EnvRule | ContextRule | DetectRule,
    Field(discriminator="kind"),
    BeforeValidator(_rule_from_file),
]
"""One inference rule of an input."""


class TaskInput(BaseModel):
    """One value a task needs: asked as ``question`` unless a rule infers it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=f"^{_ID}$", max_length=64, description="Used as {{ id }}.")
    question: str = Field(min_length=1, max_length=500, description="What to ask a person.")
    header: str = Field(min_length=1, max_length=MAX_HEADER, description="A short label.")
    type: InputType = "text"
    options: tuple[InputOption, ...] = Field(default=(), description="The choices.")
    required: bool = True
    default: str | tuple[str, ...] | None = Field(
        default=None, description="Used when no rule infers a value and nobody answers."
    )
    infer: tuple[InferRule, ...] = Field(default=(), description="Tried in order.")
    ask_when: Annotated[dict[str, tuple[str, ...]], BeforeValidator(_conditions_from_file)] = Field(
        default_factory=dict,
        description="{input id: value or [values]}: the input applies only when each "
        "named input's value is one of those (phases/conditions.py).",
        exclude_if=lambda ask_when: not ask_when,
    )

    @model_validator(mode="before")
    @classmethod
    def _other_listed_last(cls, data: object) -> object:
        # A choice written as the seed documents list it, ending with "Other (specify)":
        # that is the option phasegate adds, so it is taken as said, not refused.
        if not isinstance(data, dict) or data.get("type") != "choice":
            return data
        options = data.get("options")
        if isinstance(options, list | tuple) and len(options) > 1:
            last = options[-1]
            label = last.get("label") if isinstance(last, dict) else getattr(last, "label", None)
            if label == OTHER_LABEL:
                return {**data, "options": list(options[:-1])}
        return data

    @property
    def labels(self) -> tuple[str, ...]:
        """The option labels, in order."""
        return tuple(option.label for option in self.options)

    @model_validator(mode="after")
    def _consistent(self) -> TaskInput:
        if self.id.endswith(OTHER_SUFFIX):
            raise ValueError(f"an input id may not end with {OTHER_SUFFIX!r} (it is reserved)")
        labels = self.labels
        if len(set(labels)) != len(labels):
            raise ValueError(f"input {self.id!r}: option labels must be unique")
        if self.type == "choice" and not 1 <= len(labels) <= MAX_OPTIONS:
            raise ValueError(
                f"input {self.id!r}: a choice has 1 to {MAX_OPTIONS} options ({OTHER_LABEL!r} "
                "is added as the last)"
            )
        if self.type == "multi_choice" and not 2 <= len(labels) <= MAX_OPTIONS:
            raise ValueError(f"input {self.id!r}: a multi_choice has 2 to {MAX_OPTIONS} options")
        if self.type == "multi_choice" and any("," in label for label in labels):
            raise ValueError(
                f"input {self.id!r}: multi_choice labels may not contain ',' (answers "
                "with several labels are joined by commas)"
            )
        if self.type == "text" and len(labels) > 3:
            raise ValueError(f"input {self.id!r}: a text input lists at most 3 example options")
        self._check_default()
        self._check_ask_when()
        return self

    def _check_ask_when(self) -> None:
        for name, wanted in self.ask_when.items():
            if not re.fullmatch(_ID, name):
                raise ValueError(f"input {self.id!r}: ask_when names {name!r}, not an input id")
            if name == self.id:
                raise ValueError(f"input {self.id!r}: ask_when may not name the input itself")
            if not wanted:
                raise ValueError(
                    f"input {self.id!r}: ask_when {name!r} lists no value; give one or a list"
                )
            for value in wanted:
                problem = placeholder_problem(value)
                if problem is not None:
                    raise ValueError(f"input {self.id!r}: ask_when {name!r}: the value {problem}")

    def _check_default(self) -> None:
        default = self.default
        if default is None:
            return
        values = (default,) if isinstance(default, str) else default
        if isinstance(default, tuple) and self.type != "multi_choice":
            raise ValueError(f"input {self.id!r}: only a multi_choice default may be a list")
        for value in values:
            problem = placeholder_problem(value)
            if problem is not None:
                raise ValueError(f"input {self.id!r}: the default {problem}")
            if self.type == "multi_choice" and value not in self.labels:
                raise ValueError(f"input {self.id!r}: the default {value!r} is not an option")
