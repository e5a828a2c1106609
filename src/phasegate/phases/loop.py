"""A Ralph loop: one prompt, worked on until the agent says its promise.

A :class:`Loop` runs as a one-stage pipeline (:meth:`Loop.pipeline`): the stage's prompt is
the loop's, its only exit check is ``said: PROMISE``
(:class:`~phasegate.phases.checks.Said`), and its retry budget is the iteration limit. Each
time the agent stops is one iteration: the check runs, and when the promise was not said the
agent hears what is missing and goes on, in the same session, until it is said or the
iterations are spent. A loop is bounded by default (:data:`DEFAULT_MAX_ITERATIONS`);
``max_iterations=None`` asks for no bound but :data:`UNLIMITED_ITERATIONS`, and the run's
timeout and cost cap still apply.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from phasegate._files import WholeNumber
from phasegate.errors import UsageError
from phasegate.phases.checks import Check, Said, promise_text
from phasegate.phases.pipeline import OnFail, Pipeline, Stage
from phasegate.phases.sandbox import Sandbox

DEFAULT_MAX_ITERATIONS = 10
"""Iterations a loop may take when it does not say."""
UNLIMITED_ITERATIONS = 1_000_000
"""What an unbounded loop may take at most: more than any timeout or cost cap lets it."""
LOOP_STAGE = "loop"
"""The name of a loop's one stage, in reports and events."""


class Loop(BaseModel):
    """What a Ralph loop asks: ``prompt`` until the agent says ``<promise>PROMISE</promise>``,
    within ``max_iterations`` (None: unbounded)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(default="loop", min_length=1, description="Used in reports and logs.")
    prompt: str = Field(min_length=1)
    promise: str = Field(max_length=1000, description="The promise's text, normalised.")
    max_iterations: WholeNumber | None = Field(
        default=DEFAULT_MAX_ITERATIONS, ge=1, le=UNLIMITED_ITERATIONS
    )
    sandbox: Sandbox | None = Field(default=None, description="Confine the agent (Task.sandbox).")

    @field_validator("prompt")
    @classmethod
    def _has_words(cls, prompt: str) -> str:
        if not prompt.strip():
            raise ValueError("the prompt must not be blank")
        return prompt

    @field_validator("promise")
    @classmethod
    def _a_promise(cls, promise: str) -> str:
        return promise_text(promise)  # the said check's own rules: normalised, untagged

    @model_validator(mode="after")
    def _runs_as_a_pipeline(self) -> Loop:
        # What the loop checks must be all its pipeline needs: a loop that validates never
        # fails later, when it is run, with a stage's validation error.
        try:
            self.pipeline()
        except ValidationError as exc:
            problem = str(exc.errors(include_url=False)[0]["msg"])
            raise ValueError(problem.removeprefix("Value error, ")) from None
        return self

    @property
    def iteration_budget(self) -> int:
        """How many iterations the loop may take."""
        return self.max_iterations or UNLIMITED_ITERATIONS

    def pipeline(self) -> Pipeline:
        """The one-stage pipeline that runs the loop."""
        return loop_pipeline(
            self.prompt,
            (Said(text=self.promise),),
            self.iteration_budget,
            name=self.name,
            sandbox=self.sandbox,
        )


def loop_pipeline(
    prompt: str,
    until: Sequence[Check],
    iterations: int,
    *,
    name: str,
    sandbox: Sandbox | None = None,
) -> Pipeline:
    """The one-stage pipeline a loop runs as: ``prompt`` until every check of ``until`` holds,
    within ``iterations`` checks (the Claude Code plugin's ``/phasegate:loop`` runs one with any
    exit checks, a :class:`Loop` with its promise), confined by ``sandbox`` when given."""
    # The budget may pass what a pipeline file may ask of on_fail.retry: it is the loop's
    # own iteration limit, validated by its caller, so the bound for files does not apply.
    on_fail = OnFail.model_construct(retry=iterations - 1, back_to=None)
    stage = Stage(name=LOOP_STAGE, prompt=prompt, exit_when=tuple(until), on_fail=on_fail)
    return Pipeline(name=name, stages=(stage,), max_revisions=0, sandbox=sandbox)


def make_loop(*, prompt: str, promise: str, max_iterations: int | None, name: str = "loop") -> Loop:
    """A :class:`Loop`; a :class:`~phasegate.errors.UsageError` naming the setting (its
    ``option``) when one cannot be used."""
    data = {"name": name, "prompt": prompt, "promise": promise, "max_iterations": max_iterations}
    try:
        return Loop.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        problem = str(first["msg"]).removeprefix("Value error, ")
        if not first["loc"]:
            raise UsageError(f"the loop cannot run: {problem}") from None
        field = str(first["loc"][0])
        raise UsageError(f"the loop's {field}: {problem}", option=field) from None
