"""The first request of a task run: the prompt for the run's mode, and what comes with it.

``gate`` and ``single-query`` send the phased prompt with the completion tools and the
structured output the task asks for; ``unstructured`` (the A/B baseline) sends the task as one
plain request, with neither (nor any tool policy: without phases there is none to enforce).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from phasegate.agents.protocol import AgentRequest
from phasegate.modes import Mode
from phasegate.phases.model import Task
from phasegate.prompts.completion_tools import completion_tools
from phasegate.prompts.phased import phased_prompt, unstructured_prompt
from phasegate.prompts.templates import PromptTemplates
from phasegate.validators.protect import WRITE_TOOL_PATHS
from phasegate.validators.tool_policy import guarded_tools


def first_prompt(task: Task, mode: Mode, templates: PromptTemplates) -> str:
    """The first prompt a run in ``mode`` sends for ``task``."""
    if mode == "unstructured":
        return unstructured_prompt(task, templates)
    return phased_prompt(task, templates)


def first_request(
    task: Task, mode: Mode, templates: PromptTemplates, workdir: Path, *, max_attempts: int
) -> AgentRequest:
    """The first request: the prompt, plus the completion tools and structured output the
    task asks for (the unstructured baseline gets neither). The gate answers at most
    ``max_attempts`` stops with feedback: that is the session's ``stop_blocks``."""
    prompt = first_prompt(task, mode, templates)
    if mode == "unstructured":
        confined = task.sandbox is not None and task.sandbox.confined
        return AgentRequest(
            prompt=prompt,
            workdir=workdir,
            read_only=task.read_only,
            toolset=task.offered_tools,
            # No phase policy to enforce; a sandbox still keeps the file tools inside.
            check_before=tuple(WRITE_TOOL_PATHS) if confined else (),
            stop_blocks=max_attempts,
        )
    output = task.output_phase
    return AgentRequest(
        prompt=prompt,
        workdir=workdir,
        tools=completion_tools(task),
        output_schema=output.output_schema if output and output.structured_output else None,
        read_only=task.read_only,
        toolset=task.offered_tools,
        check_before=_checked_tools(task),
        stop_blocks=max_attempts,
    )


def _checked_tools(task: Task) -> tuple[str, ...] | Literal["all"]:
    """The calls to ask about before they run: those a phase's tool policy may refuse
    (none in the unstructured baseline, which has no phases to enforce)."""
    tools = guarded_tools(task)
    return "all" if tools is None else tools
