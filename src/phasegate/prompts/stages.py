"""How a pipeline's stages become text: the stage prompt, feedback, a revision, a resume.

Each is rendered from an editable template (``stage.md``, ``stage_feedback.md``,
``stage_revision.md``, ``pipeline_resume.md``). A stage that runs a phased task embeds the
task's phased prompt; its checks are listed so the agent knows what "done" means before it
starts. Failures go back as JSON, like the phase gate's feedback
(:mod:`phasegate.prompts.feedback`): each failed check with its code, what must hold, what was
found and what would fix it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from phasegate.phases.pipeline import Pipeline
from phasegate.prompts.phased import phased_prompt
from phasegate.prompts.templates import PromptTemplates
from phasegate.validators.issues import IssueCode
from phasegate.validators.protect import describe_protect
from phasegate.validators.stage_checks import CheckOutcome, describe, describe_task


def stage_prompt(pipeline: Pipeline, index: int, templates: PromptTemplates) -> str:
    """The prompt that starts stage ``index`` (0-based)."""
    stage = pipeline.stages[index]
    parts = [stage.prompt.strip()] if stage.prompt and stage.prompt.strip() else []
    checks = [f"- {describe(check)}" for check in stage.exit_when]
    if stage.task is not None:
        parts.append(phased_prompt(stage.task, templates).strip())
        checks.append(f"- {describe_task(stage.task.name)}")
    if stage.protect:
        checks.append(f"- {describe_protect(stage.protect)}")
    return templates.render(
        "stage.md",
        number=index + 1,
        count=len(pipeline.stages),
        stage_name=stage.name,
        pipeline_line=f"(pipeline {pipeline.name})",
        instructions="\n\n".join(parts),
        checks="\n".join(checks),
    ).strip()


def failed_checks_json(outcomes: Sequence[CheckOutcome]) -> str:
    """The failed checks as the JSON block feedback carries; ``fix`` (the outcome's remedy)
    only when there is one."""
    failed = [
        {
            "code": IssueCode.EXIT_CONDITION_FAILED.value,
            "check": outcome.kind,
            "must_hold": outcome.description,
            "found": outcome.detail,
            **({"fix": outcome.remedy} if outcome.remedy else {}),
        }
        for outcome in outcomes
        if not outcome.ok
    ]
    return json.dumps(failed, indent=2, ensure_ascii=False)


def stage_feedback(
    pipeline: Pipeline,
    index: int,
    outcomes: Sequence[CheckOutcome],
    *,
    attempts_left: int,
    templates: PromptTemplates,
    task_feedback: str | None = None,
) -> str:
    """What the agent hears when stage ``index`` is checked and is not complete yet."""
    return templates.render(
        "stage_feedback.md",
        stage_name=pipeline.stages[index].name,
        attempts_left=attempts_left,
        feedback_json=failed_checks_json(outcomes),
        task_feedback=f"\n{task_feedback.strip()}\n" if task_feedback else "",
    ).strip()


def revision_prompt(
    pipeline: Pipeline,
    failed: int,
    target: int,
    outcomes: Sequence[CheckOutcome],
    templates: PromptTemplates,
) -> str:
    """The prompt that sends the pipeline back from stage ``failed`` to stage ``target``."""
    return templates.render(
        "stage_revision.md",
        failed_stage=pipeline.stages[failed].name,
        stage_name=pipeline.stages[target].name,
        feedback_json=failed_checks_json(outcomes),
        stage_prompt=stage_prompt(pipeline, target, templates),
    ).strip()


def resume_prompt(
    pipeline: Pipeline, index: int, done: Sequence[str], reason: str, templates: PromptTemplates
) -> str:
    """The prompt that continues an interrupted run at stage ``index``."""
    return templates.render(
        "pipeline_resume.md",
        reason=reason,
        done=", ".join(done) if done else "none",
        stage_prompt=stage_prompt(pipeline, index, templates),
    ).strip()
