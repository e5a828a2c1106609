"""The feedback a gate sends back when a phase falls short.

The structure is JSON the model can act on, each issue grouped by what is wrong with it:
``invalid`` (given, but wrong: with what was ``provided``), ``missing`` (not given at all) or
``unknown`` (a field the schema does not have, by its path)::

    {
      "result": "validation_failed",
      "issues": {
        "invalid": [{"phase", "code", "field", "provided", "problem", "requirement"}],
        "missing": [{"phase", "code", "field", "problem", "requirement"}],
        "unknown": ["$.field_the_schema_does_not_have"]
      },
      "issue_count": 3,
      "action": "Continue with phase 1 (edit): ..."
    }

``action`` comes last (models weigh the end of a message most) and always points forward
to the next concrete step; it never says "try again", which invites blind repetition.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from phasegate.phases.completion import (
    PHASE_COMPLETE,
    STRUCTURED_OUTPUT_TOOL,
    SUBMIT_SUMMARY,
    claim_ways,
    summary_ways,
)
from phasegate.phases.markers import marker_line
from phasegate.phases.model import Task
from phasegate.prompts.templates import PromptTemplates
from phasegate.validators.issues import Issue


@dataclass(frozen=True, slots=True)
class FeedbackPrompt:
    """Structured feedback for one failed gate check."""

    data: dict[str, Any]
    attempts_left: int

    @classmethod
    def build(
        cls, task: Task, issues: list[Issue] | tuple[Issue, ...], *, attempts_left: int
    ) -> FeedbackPrompt:
        """Group ``issues`` and point the model at the first phase that needs work."""
        grouped: dict[str, list[Any]] = {"invalid": [], "missing": [], "unknown": []}
        for issue in issues:
            if issue.group == "unknown":
                grouped["unknown"].append(issue.field or issue.message)
                continue
            item: dict[str, Any] = {"phase": issue.phase, "code": issue.code.value}
            if issue.field is not None:
                item["field"] = issue.field
            if issue.group == "invalid" and issue.provided is not None:
                item["provided"] = issue.provided
            item["problem"] = issue.message
            if issue.requirement is not None:
                item["requirement"] = issue.requirement
            grouped[issue.group].append(item)
        data = {
            "result": "validation_failed",
            "issues": {group: items for group, items in grouped.items() if items},
            "issue_count": len(issues),
            "action": next_action(task, issues),
        }
        return cls(data=data, attempts_left=attempts_left)

    def render(self, templates: PromptTemplates | None = None) -> str:
        """The feedback as the text the agent receives."""
        return (templates or PromptTemplates()).render(
            "feedback.md",
            attempts_left=self.attempts_left,
            feedback_json=json.dumps(self.data, indent=2, ensure_ascii=False),
        )


def next_action(task: Task, issues: list[Issue] | tuple[Issue, ...]) -> str:
    """One forward-pointing instruction: what to do now, and what follows it."""
    failing = sorted({i.phase for i in issues if i.phase is not None})
    if not failing:
        return "Fix the issues listed above, then finish the remaining phases in order."
    first = task.phases[failing[0] - 1]
    index = failing[0]
    if first.is_output:
        return (
            f"Give a corrected answer for phase {index} ({first.name}) that resolves every "
            f"issue above: {answer_step(task)}, and nothing after it."
        )
    steps = [
        f"Continue with phase {index} ({first.name}): resolve its issues above",
        f"then {complete_step(task, index)}",
    ]
    later = [p for p in task.phases[index:] if not p.is_output]
    if later:
        names = ", ".join(f"{task.index_of(p)} ({p.name})" for p in later)
        steps.append(f"then do phase(s) {names} in order, completing each the same way")
    if task.output_phase is not None:
        output = task.output_phase
        steps.append(
            f"then give the answer of phase {task.index_of(output)} ({output.name}): "
            f"{answer_step(task)}"
        )
    return "; ".join(steps) + "."


def complete_step(task: Task, index: int) -> str:
    """How to mark work phase ``index`` complete in the task's completion mode."""
    words = {
        "tool": f"call {PHASE_COMPLETE}(phase={index}, note=...)",
        "marker": f"print '{marker_line(index, task.phases[index - 1].marker)}'",
    }
    first, *other = (words[way] for way in claim_ways(task.completion))
    return f"{first} (or {other[0]})" if other else first


def answer_step(task: Task) -> str:
    """How to give the output phase's JSON in the task's completion mode."""
    output = task.output_phase
    structured = output is not None and output.structured_output
    words = {
        "structured_output": f"call {STRUCTURED_OUTPUT_TOOL} with the object",
        "submit_summary": f"call {SUBMIT_SUMMARY}(summary=...) with the object",
        "text": "print the object in a ```json block",
    }
    return " or ".join(
        words[w] for w in summary_ways(task.completion, structured_output=structured)
    )
