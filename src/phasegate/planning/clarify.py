"""The clarify phase: a read-only task whose answer is a proposal of inferred values and
questions, checked by the clarification rules before it is accepted.

The agent gets the inputs (their ids, questions, types and options), what is already known
(what the rules inferred, the answers so far), and the rules a proposal must follow. It may
read the project (reading tools only; any change on disk fails the gate and is reverted) and
answers ``{"inferred": {id: {"value", "source"}}, "questions": [...]}``. The answer check
(:func:`proposal_check`) applies :func:`~phasegate.planning.clarification.check_proposal` to
the proposal with what is already known added, so a broken rule comes back as feedback in
the same session.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from phasegate.phases.inputs import OTHER_LABEL, TaskInput
from phasegate.phases.model import Task
from phasegate.planning.clarification import check_proposal
from phasegate.planning.plan import Plan
from phasegate.validators.judge import AnswerCheck

PROPOSAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["inferred", "questions"],
    "additionalProperties": False,
    "properties": {
        "inferred": {
            "type": "object",
            "description": 'Per input id: {"value": ..., "source": "the file or fact"}.',
            "additionalProperties": {
                "type": "object",
                "required": ["value", "source"],
                "properties": {
                    "value": {"type": ["string", "array"]},
                    "source": {"type": "string", "minLength": 1},
                },
            },
        },
        "questions": {
            "type": "array",
            "description": "The questions to ask this turn, by the rules.",
            "items": {"type": "object", "required": ["id"]},
        },
    },
}
"""What the clarify phase answers; the rules themselves are checked by the answer check."""


def known_values(plan: Plan) -> dict[str, dict[str, Any]]:
    """What the reference plan's rules inferred (and the defaults), as proposal entries."""
    return {
        key: {"value": _plain(entry.value), "source": entry.source}
        for key, entry in plan.inferred.items()
        if key not in plan.not_applicable
    }


def clarify_task(name: str, inputs: Sequence[TaskInput], plan: Plan) -> Task:
    """The read-only task that asks the agent for a proposal about ``inputs``, given the
    reference ``plan`` of the same definition."""
    described = [_described(item) for item in inputs]
    instructions = "\n".join(
        [
            f"You are preparing the task {name!r}. Do not change anything: only read the "
            "project (its files, its configuration) to find the values of the inputs below.",
            "",
            "The inputs, in declared order:",
            _quoted(described),
            "",
            "Already known (keep these; do not ask them):",
            _quoted(known_values(plan)),
            "",
            "Not applicable by their ask_when (never ask or infer these):",
            _quoted(list(plan.not_applicable)),
            "",
            "Answered by the person so far (do not ask these; an answer "
            f"{OTHER_LABEL!r} without its text is asked as <id>__other):",
            _quoted(plan.responses),
            "",
            "Answer with one JSON object:",
            '{"inferred": {"<input id>": {"value": ..., "source": "<the file or fact it came '
            'from>"}}, "questions": [{"id": ..., "question": ..., "header": ..., "options": '
            "[...]}]}",
            "",
            "Rules:",
            "- Infer a value only when the project shows it; name the file or fact as source. "
            "A choice takes one of its option labels; never a placeholder (TBD, TODO, ..., "
            "<...>).",
            f"- Ask at most {plan.questions_per_turn} question(s): the first inputs still "
            "missing (required, not inferred, no default), in declared order, with the "
            "declared question, header and options.",
            "- An input with ask_when applies only when each input it names has one of the "
            "listed values (any case; a choice answered with typed text has that text): ask "
            "it only after those inputs have a value, never when it does not apply, and "
            "infer nothing for it then.",
            f"- A single choice ends with the option {OTHER_LABEL!r}.",
            "- Ask nothing when nothing is missing.",
        ]
    )
    return Task.model_validate(
        {
            "name": f"{name}: clarify",
            "description": "Infer what the project shows; propose the questions to ask.",
            "phases": [
                {"name": "clarify", "instructions": instructions, "output_schema": PROPOSAL_SCHEMA}
            ],
            "completion": "marker",
            "read_only": True,
            "allow_reads_outside": False,
            "on_reject": "revert",
        }
    )


def proposal_check(inputs: Sequence[TaskInput], plan: Plan) -> AnswerCheck:
    """The answer check of the clarify phase: the clarification rules, applied to the
    proposal with what the reference plan's rules inferred added (the agent need not repeat
    it, and cannot override it) and the person's answers so far."""

    def check(answer: dict[str, Any]) -> list[str]:
        proposal = dict(answer)
        given = answer.get("inferred")
        proposal["inferred"] = {**(given if isinstance(given, dict) else {}),
                                **known_values(plan)}  # fmt: skip
        problems = check_proposal(inputs, proposal, questions_per_turn=plan.questions_per_turn,
                                  responses=plan.responses)  # fmt: skip
        if not isinstance(given, dict):
            problems.append('Give inferred as an object: {"<input id>": {...}}.')
        return problems

    return check


def _described(item: TaskInput) -> dict[str, Any]:
    described: dict[str, Any] = {"id": item.id, "question": item.question,
                                 "header": item.header, "type": item.type,
                                 "required": item.required}  # fmt: skip
    if item.options:
        described["options"] = [option.label for option in item.options]
    if item.default is not None:
        described["default"] = _plain(item.default)
    if item.ask_when:
        described["ask_when"] = {key: list(values) for key, values in item.ask_when.items()}
    return described


def _plain(value: object) -> object:
    return list(value) if isinstance(value, tuple) else value


def _quoted(data: object) -> str:
    # The text is data for the agent; "{{" would read as a placeholder of this task.
    return json.dumps(data, ensure_ascii=False, indent=1).replace("{{", "{ {")
