"""The completion tools as the model sees them: their definitions and their answers.

``phase_complete(phase, note)`` and ``submit_summary(summary)`` are judged the moment they
are called, and answer in one structured shape, so the model can correct itself in the same
turn::

    {"result": "success" | "validation_failed" | "error" | "recorded",
     "attempted": {...what the call asked for...},
     "issues": {...feedback groups...}, "issue_count": 2,    # validation_failed only
     "error": "...",                                         # error only
     "action": "..."}                                        # always last, pointing forward

Input schemas are deliberately loose (no ``required``): the runtime rejects input that breaks
a tool's schema before phasegate sees it, with a plain message; phasegate answers every
problem itself, in the structured shape. The output schema is spelled out in
``submit_summary``'s description instead. ``issues`` is grouped as in the gate's feedback
(:mod:`phasegate.prompts.feedback`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from phasegate.phases.completion import (
    PHASE_COMPLETE,
    SUBMIT_SUMMARY,
    counts_tools,
    full_tool_name,
)
from phasegate.phases.model import Task
from phasegate.prompts.feedback import FeedbackPrompt, answer_step, complete_step
from phasegate.validators.issues import Issue


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool definition: short name, description and JSON Schema of its input."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolAnswer:
    """What a completion tool call gets back. ``ok`` is False unless the call succeeded."""

    ok: bool
    data: dict[str, Any]

    @property
    def text(self) -> str:
        """The answer as the tool result's text."""
        return json.dumps(self.data, ensure_ascii=False)


def completion_tools(task: Task) -> tuple[ToolSpec, ...]:
    """The tools the task offers: none in ``marker`` mode."""
    if not counts_tools(task.completion):
        return ()
    tools = []
    if task.work_phases:
        phases = "; ".join(f"{task.index_of(p)} = {p.name}" for p in task.work_phases)
        tools.append(
            ToolSpec(
                name=PHASE_COMPLETE,
                description=(
                    "Mark one work phase of the task complete, once its work is really done. "
                    "The evidence (your tool calls, the files on disk) is checked at once; the "
                    "answer is JSON whose result is success or validation_failed (with the "
                    f"issues to fix) and whose action says what to do next. Work phases: {phases}."
                ),
                input_schema=_loose_input(
                    # A quoted number is accepted (see tool_claim): let it reach us.
                    phase=(["integer", "string"], "The phase number."),
                    note=("string", "One line: what you did."),
                ),
            )
        )
    output = task.output_phase
    if output is not None:
        schema = json.dumps(output.output_schema, ensure_ascii=False, separators=(",", ":"))
        tools.append(
            ToolSpec(
                name=SUBMIT_SUMMARY,
                description=(
                    f"Hand in the answer of phase {task.index_of(output)} ({output.name}), "
                    "after every work phase is complete. `summary` is the JSON object itself "
                    f"and must satisfy this JSON Schema: {schema}. It is checked at once "
                    "against the schema and against what you really did."
                ),
                # An object sent as a JSON string is accepted too (see answers).
                input_schema=_loose_input(summary=(["object", "string"], "The answer object.")),
            )
        )
    return tuple(tools)


def definition_characters(tools: Sequence[ToolSpec]) -> int:
    """The characters ``tools``' definitions take in each model request: each as the
    runtime sends it (full name, description, input schema), as compact JSON."""
    return sum(
        len(
            json.dumps(
                {
                    "name": full_tool_name(tool.name),
                    "description": tool.description,
                    "input_schema": tool.input_schema,
                },
                ensure_ascii=False,
                separators=(",", ":"),
            )
        )
        for tool in tools
    )


def _loose_input(**properties: tuple[str | list[str], str]) -> dict[str, Any]:
    """An input schema of typed, described properties, none required (see the module doc)."""
    return {
        "type": "object",
        "properties": {
            name: {"type": kind, "description": description}
            for name, (kind, description) in properties.items()
        },
    }


def success_answer(task: Task, attempted: dict[str, Any], index: int) -> ToolAnswer:
    """Phase ``index`` (or, for the output phase, the whole task) passed its check."""
    phase = task.phases[index - 1]
    if phase.is_output:
        action = "The answer is accepted and every phase is complete. End your turn now."
    elif index < len(task.phases):
        after = task.phases[index]
        how = (
            answer_step(task)
            if after.is_output
            else f"do its work, then {complete_step(task, index + 1)}"
        )
        action = f"Phase {index} is complete. Go on with phase {index + 1} ({after.name}): {how}."
    else:
        action = "Every phase is complete. End your turn now."
    return ToolAnswer(True, {"result": "success", "attempted": attempted, "action": action})


def failed_answer(task: Task, attempted: dict[str, Any], issues: list[Issue]) -> ToolAnswer:
    """The call's check found issues: grouped as in gate feedback
    (:mod:`phasegate.prompts.feedback`), then the next step."""
    feedback = FeedbackPrompt.build(task, issues, attempts_left=0).data
    return ToolAnswer(False, {"result": feedback.pop("result"), "attempted": attempted, **feedback})


def error_answer(attempted: dict[str, Any], error: str, action: str) -> ToolAnswer:
    """The call itself could not be judged (bad arguments, budget spent)."""
    return ToolAnswer(
        False, {"result": "error", "attempted": attempted, "error": error, "action": action}
    )


def recorded_answer(attempted: dict[str, Any]) -> ToolAnswer:
    """``single-query`` mode: the claim is noted and judged once, when the run ends."""
    return ToolAnswer(
        True,
        {
            "result": "recorded",
            "attempted": attempted,
            "action": "Noted; it is judged when the run ends. Go on with the next phase.",
        },
    )
