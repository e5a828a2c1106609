"""How the grader of a ``rubric`` check runs: its model, its turns, its cost cap.

A task or a pipeline may say ``grader: {model: haiku, max_turns: 6, max_cost_usd: 0.10}``;
a caller's settings (the command line, :class:`~phasegate.running.RunOptions`) win over the
file's, field by field, and what neither says takes the defaults here. The grader is a
separate session with no writing tool (docs/grader.md); these settings bound it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from phasegate._files import Number, WholeNumber

DEFAULT_GRADER_MODEL = "haiku"
"""The grader's model unless a setting names one: a small one, as judging a few criteria
against evidence in hand needs little."""
DEFAULT_GRADER_TURNS = 8
"""Model turns one grader session may take (reading a file is a turn)."""
DEFAULT_GRADER_COST_USD = 0.25
"""What one grader session may cost, in USD, before the runtime ends it."""
MAX_GRADER_TURNS = 100


class GraderSettings(BaseModel):
    """Settings of the grader of a ``rubric`` check; a field left out takes the next
    layer's value (the caller's, the file's, then the defaults)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description=f"The grader's model (default: {DEFAULT_GRADER_MODEL}).",
    )
    max_turns: WholeNumber | None = Field(
        default=None,
        ge=1,
        le=MAX_GRADER_TURNS,
        description=f"Model turns one grader session may take (default: {DEFAULT_GRADER_TURNS}).",
    )
    max_cost_usd: Number | None = Field(
        default=None,
        gt=0,
        le=1000,
        description="What one grader session may cost in USD (default: "
        f"{DEFAULT_GRADER_COST_USD:g}).",
    )

    def over(self, base: GraderSettings | None) -> GraderSettings:
        """These settings, with what they leave out taken from ``base``."""
        if base is None:
            return self
        given = self.model_dump(exclude_none=True)
        return base.model_copy(update=given)

    @property
    def resolved_model(self) -> str:
        """The model the grader runs."""
        return self.model or DEFAULT_GRADER_MODEL

    @property
    def resolved_turns(self) -> int:
        """The turns one grader session may take."""
        return self.max_turns or DEFAULT_GRADER_TURNS

    @property
    def resolved_cost(self) -> float:
        """What one grader session may cost, in USD."""
        return self.max_cost_usd or DEFAULT_GRADER_COST_USD
