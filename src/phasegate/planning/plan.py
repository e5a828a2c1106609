"""What planning gives back: :class:`Plan`, one JSON document.

A plan says what could be inferred (``inferred``: value and source per input), what is still
missing (``missing_info``: required inputs that apply; ``not_applicable``: the inputs whose
``ask_when`` does not hold, never asked) and the questions to ask for it this turn
(``questions``, and the same as Claude Code's ``AskUserQuestion`` input in
``ask_user_question``), how far along it is (``progress``: exactly 1.0 when nothing is
missing), and whether the answers so far are usable (``validation``). It also keeps what it
was made from (``context``, the accepted ``responses`` as ``{id: value}``,
``questions_per_turn``, ``digests`` of the definition and of the work directory facts
inference read), so running it later can check that planning again gives the same
``plan_id``. :meth:`Plan.to_json` gives the same bytes for the same plan.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from phasegate._files import read_mapping, validate_model
from phasegate.errors import InputProblem, PlanFileError
from phasegate.modes import DefinitionKind
from phasegate.planning.questions import Question

API_VERSION = "1"
"""The version of the plan document; another version must be planned again."""

PlanStatus = Literal["needs_answers", "ready", "invalid"]
"""``ready``: nothing missing, no problems; ``needs_answers``: ask ``questions``;
``invalid``: problems no question can fix (see ``validation``)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class InferredValue(_Model):
    """A value inference found, or the input's default, and where it came from."""

    value: str | tuple[str, ...]
    source: str = Field(description='The rule and what it read, or "default".')


class PlanValidation(_Model):
    """Whether the responses so far are usable, and what is wrong with them."""

    valid: bool
    errors: tuple[InputProblem, ...] = ()


class PlanDigests(_Model):
    """Fingerprints of what the plan was made from."""

    definition: str = Field(description="The task or pipeline, as loaded.")
    workdir: str = Field(description="The work directory facts inference read.")


class Plan(_Model):
    """A plan for a task or pipeline: inferred values, questions, progress, validation."""

    api_version: str = API_VERSION
    plan_id: str = Field(description="A digest of definition, context, values and responses.")
    status: PlanStatus
    task: str = Field(description="The task or pipeline's name.")
    kind: DefinitionKind
    turn: int = Field(description="The turn the questions are for; with none, turns used.")
    max_turns: int
    questions_per_turn: int
    questions: tuple[Question, ...] = ()
    ask_user_question: dict[str, Any] | None = Field(
        default=None, description="The questions as Claude Code's AskUserQuestion input."
    )
    inferred: dict[str, InferredValue] = Field(default_factory=dict)
    missing_info: tuple[str, ...] = Field(
        default=(), description="Required inputs that apply and are missing."
    )
    not_applicable: tuple[str, ...] = Field(
        default=(),
        description="Inputs whose ask_when does not hold: never asked, rendered empty.",
        exclude_if=lambda ids: not ids,
    )
    progress: float = Field(ge=0.0, le=1.0)
    validation: PlanValidation
    context: dict[str, Any] = Field(default_factory=dict)
    responses: dict[str, Any] = Field(default_factory=dict, description="As {id: value}.")
    digests: PlanDigests
    proposed: dict[str, InferredValue] = Field(
        default_factory=dict,
        description="Values the agent planner inferred that count (none: left out).",
        exclude_if=lambda proposed: not proposed,
    )

    def to_json(self) -> str:
        """The plan as JSON with sorted keys: the same plan always gives the same text."""
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, indent=2) + "\n"


def load_plan(path: str | Path) -> Plan:
    """Read a plan file written from :meth:`Plan.to_json`; a
    :class:`~phasegate.errors.PlanFileError` names the file and field of any problem."""
    file = Path(path)
    data = read_mapping(file, PlanFileError)
    return validate_model(Plan, data, path=file, error=PlanFileError)


def progress(total: int, missing: int) -> float:
    """The share of the inputs that were missing (and apply) which are now answered: exactly
    1.0 when nothing is missing, 0.0 when nothing has been answered yet."""
    if missing == 0 or total == 0:
        return 1.0
    return round((total - missing) / total, 4)
