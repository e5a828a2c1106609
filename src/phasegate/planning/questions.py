"""Questions: what a plan asks a person, one per missing input (or its "Other" text).

A single choice's question lists its options and then ``Other (specify)``; a multi_choice's
lists its options; a text question lists its example answers, then ``Other (specify)`` (type
the answer), and ``I don't know`` when it has no examples. A question has 2 to 13 options
(a choice's up to 12 and ``Other (specify)``); one with more than the 4 Claude Code's
``AskUserQuestion`` shows is relayed to it in groups
(:mod:`phasegate.planning.ask_user_question`). Choosing ``Other (specify)`` on a single
choice without typing a value asks the follow-up question ``<id>__other``, free text.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from phasegate.phases.inputs import OTHER_LABEL, InputType, TaskInput
from phasegate.planning.answers import other_id

DONT_KNOW_LABEL = "I don't know"
"""The second option of a free-text question without examples: an answer that is refused,
so the input stays missing."""


class QuestionOption(BaseModel):
    """One option a person may choose."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str
    description: str = ""


class Question(BaseModel):
    """One question of a plan's turn."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="The key its answer has in the responses.")
    input: str = Field(description="The input it fills.")
    question: str
    header: str = Field(description="At most 12 characters.")
    type: InputType
    options: tuple[QuestionOption, ...] = Field(description="2 to 13 options.")
    multi_select: bool = False


def question_for(item: TaskInput) -> Question:
    """The question that asks ``item``."""
    options = [QuestionOption(label=o.label, description=o.description) for o in item.options]
    if item.type == "choice":
        options.append(QuestionOption(label=OTHER_LABEL, description="Type your own value"))
    elif item.type == "text":
        options = [*options, *_free_text_options(with_dont_know=not options)]
    return Question(
        id=item.id,
        input=item.id,
        question=item.question,
        header=item.header,
        type=item.type,
        options=tuple(options),
        multi_select=item.type == "multi_choice",
    )


def follow_up_for(item: TaskInput) -> Question:
    """The free-text question asked after "Other (specify)" was chosen without a value."""
    return Question(
        id=other_id(item),
        input=item.id,
        question=follow_up_text(item),
        header=item.header,
        type="text",
        options=_free_text_options(with_dont_know=True),
    )


def follow_up_text(item: TaskInput) -> str:
    """The text of ``item``'s follow-up question (answers are matched to it)."""
    return f"{item.question} (you chose {OTHER_LABEL}: which one?)"


def _free_text_options(*, with_dont_know: bool) -> list[QuestionOption]:
    options = [QuestionOption(label=OTHER_LABEL, description="Type the answer")]
    if with_dont_know:
        options.append(QuestionOption(label=DONT_KNOW_LABEL, description="Leave it unanswered"))
    return options
