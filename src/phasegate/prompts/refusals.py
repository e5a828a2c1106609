"""What the model is told when a call is refused before it runs (the reason Claude Code gives
it as the call's error result): which phase is current, what it allows, and what completes
it, so the model can act on it in its next step."""

from __future__ import annotations

from phasegate.phases.model import Task
from phasegate.prompts.feedback import answer_step, complete_step
from phasegate.validators.tool_policy import Refusal


def refusal_reason(task: Task, refusal: Refusal) -> str:
    """The reason ``refusal`` gives the model."""
    phase = task.phases[refusal.phase - 1]
    current = f"phase {refusal.phase} ({phase.name})"
    if refusal.kind == "summary_too_early":
        return (
            f"Refused: submit_summary hands in the task's answer, and {current} is not "
            f"complete yet. Do its work, then {complete_step(task, refusal.phase)}; submit "
            "the summary once every work phase is complete."
        )
    allowed = ", ".join(refusal.allowed or ()) or "none of the runtime's tools"
    if phase.is_output:
        step = answer_step(task)
        return (
            f"Refused: {refusal.tool} is not allowed in {current}, the last phase, which "
            f"allows {allowed}. Nothing ran. To finish, {step}."
        )
    return (
        f"Refused: {refusal.tool} is not allowed in {current}, the current phase, which "
        f"allows {allowed}. Nothing ran. Do the phase's work with those tools, then "
        f"{complete_step(task, refusal.phase)}; from then on the next phase's tools are allowed."
    )
