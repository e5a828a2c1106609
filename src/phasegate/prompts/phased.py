"""How a task becomes the prompt the agent starts from.

:func:`phased_prompt` spells out every phase, its marker and the ordering rules.
:func:`unstructured_prompt` asks for the same work with no phase scaffolding: the A/B
baseline that shows what the structure buys.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from phasegate.phases.markers import marker_line
from phasegate.phases.model import Phase, Task
from phasegate.prompts.templates import PromptTemplates
from phasegate.validators.stage_checks import describe


def phased_prompt(task: Task, templates: PromptTemplates | None = None) -> str:
    """The phase-structured prompt for ``task``."""
    templates = templates or PromptTemplates()
    blocks = [_phase_block(task, phase, templates) for phase in task.phases]
    output = task.output_phase
    rules = []
    if output is not None and task.work_phases:
        rules.append(
            f"- Give the JSON answer only in phase {task.index_of(output)}, after phase "
            f"{task.index_of(output) - 1} is marked complete; never earlier."
        )
    if task.protect:
        rules.append(protect_rule(task.protect))
    if task.checks:
        rules.append(
            "- Before the task is accepted, the gate itself checks that "
            + "; ".join(describe(check) for check in task.checks)
            + "."
        )
    output_rule = "\n".join(rules)
    return _tidy(
        templates.render(
            "phased.md",
            task_name=task.name,
            description=_paragraph(task.description),
            phase_count=len(task.phases),
            phase_count_text="1 phase" if len(task.phases) == 1 else f"{len(task.phases)} phases",
            phases="\n\n".join(block.strip() for block in blocks),
            output_rule=output_rule,
        )
    )


def protect_rule(globs: Sequence[str]) -> str:
    """The rule line that tells the agent which paths it must not change."""
    shown = ", ".join(f"`{glob}`" for glob in globs)
    return (
        f"- Never add, change or delete anything matching {shown}: those paths are protected, "
        "and a change to them, by any tool or command, fails the check."
    )


def unstructured_prompt(task: Task, templates: PromptTemplates | None = None) -> str:
    """The same task as one plain request: no phases, no markers, no ordering rules."""
    templates = templates or PromptTemplates()
    output = task.output_phase
    return _tidy(
        templates.render(
            "unstructured.md",
            task_name=task.name,
            description=_paragraph(task.description),
            instructions="\n\n".join(
                [p.instructions.strip() for p in task.work_phases]
                + ([protect_rule(task.protect).removeprefix("- ")] if task.protect else [])
            ),
            output=(
                output.instructions.strip()
                + "\n\n"
                + templates.render("unstructured_output.md", schema=schema_text(output))
                if output is not None
                else ""
            ),
        )
    )


def _phase_block(task: Task, phase: Phase, templates: PromptTemplates) -> str:
    index = task.index_of(phase)
    if phase.is_output:
        return templates.render(
            "output_phase.md",
            index=index,
            previous_index=index - 1,
            after_previous=f" (ONLY AFTER PHASE {index - 1} IS COMPLETE)" if index > 1 else "",
            name_upper=phase.name.upper(),
            instructions=phase.instructions.strip(),
            how_to_answer=templates.render(
                "answer_structured.md"
                if phase.structured_output
                else f"answer_{task.completion}.md"
            ).strip(),
            schema=schema_text(phase),
            claims_rule=(
                f"\nList in `{phase.claims_files}` every file you changed, as paths relative "
                "to the working directory, and no file you did not change.\n"
                if phase.claims_files
                else ""
            ),
        )
    line = marker_line(index, phase.marker)
    return templates.render(
        "work_phase.md",
        index=index,
        name_upper=phase.name.upper(),
        instructions=phase.instructions.strip(),
        requirements=_requirements(phase),
        marker_line=line,  # not in the bundled text; there for an override to use
        how_to_complete=templates.render(
            f"complete_{task.completion}.md", index=index, marker_line=line
        ).strip(),
    )


def _requirements(phase: Phase) -> str:
    lines = []
    if phase.require_tools:
        lines.append(
            f"- Required: at least one successful call of {' or '.join(phase.require_tools)}."
        )
    if phase.require_changes:
        lines.append("- Required: files on disk really change during this phase.")
    if phase.checks:
        # Said before the work starts, so "done" means what the gate will check.
        lines.append(
            "- Checked by the gate when you mark this phase complete, and again before the "
            "task is accepted: " + "; ".join(describe(check) for check in phase.checks) + "."
        )
    return ("\n" + "\n".join(lines) + "\n") if lines else ""


def schema_text(phase: Phase) -> str:
    """The output schema of ``phase`` as the prompt shows it."""
    return json.dumps(phase.output_schema, indent=2, ensure_ascii=False)


def _paragraph(text: str | None) -> str:
    return f"\n{text.strip()}\n" if text and text.strip() else ""


def _tidy(text: str) -> str:
    """Collapse runs of blank lines left by empty placeholders."""
    lines: list[str] = []
    for line in text.strip().splitlines():
        if not line.strip() and lines and not lines[-1].strip():
            continue
        lines.append(line.rstrip())
    return "\n".join(lines) + "\n"
