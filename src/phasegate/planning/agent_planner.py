"""The agent planner: the reference plan, improved by an agent that reads the project.

The reference planner runs first (its rules win where they find a value). Then a read-only
clarify phase asks the agent for what else the project shows and for this turn's
questions; the gate checks the proposal with the clarification rules and feeds problems back
in the same session. An accepted proposal's values join the plan (source ``agent: ...``)
and the questions follow from the rules, as for the reference planner. A clarify run that
is not accepted, because the budget ran out or a file changed on disk, gives no plan.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phasegate.modes import DEFAULT_MAX_ATTEMPTS
from phasegate.phases.model import Task
from phasegate.phases.pipeline import Pipeline
from phasegate.planning.clarification import DEFAULT_QUESTIONS_PER_TURN
from phasegate.planning.plan import InferredValue, Plan
from phasegate.planning.reference import Responses, plan_task, task_inputs
from phasegate.agents.protocol import Agent
from phasegate.planning.clarify import clarify_task, proposal_check
from phasegate.tasks.report import RunReport
from phasegate.tasks.runner import Runner
from phasegate.telemetry.events import EventSink

AGENT_SOURCE = "agent"
"""The prefix of the source of a value the agent planner inferred."""


@dataclass(frozen=True, slots=True)
class AgentPlan:
    """What the agent planner gives back: the plan (None when the clarify phase was not
    accepted) and the clarify run's report."""

    plan: Plan | None
    report: RunReport


async def plan_with_agent(
    definition: Task | Pipeline,
    workdir: str | Path,
    agent: Agent,
    *,
    context: Mapping[str, Any] | None = None,
    responses: Responses | None = None,
    questions_per_turn: int = DEFAULT_QUESTIONS_PER_TURN,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    timeout: float | None = None,
    on_event: EventSink | None = None,
) -> AgentPlan:
    """Plan ``definition`` for ``workdir`` with ``agent`` reading the project (arguments as
    for :func:`~phasegate.planning.reference.plan_task`; ``max_attempts``, ``timeout`` and
    ``on_event`` as for :class:`~phasegate.tasks.runner.Runner`)."""
    reference = plan_task(definition, workdir, context=context, responses=responses,
                          questions_per_turn=questions_per_turn)  # fmt: skip
    inputs = task_inputs(definition)
    runner = Runner(
        agent,
        max_attempts=max_attempts,
        timeout=timeout,
        on_event=on_event,
        check_answer=proposal_check(inputs, reference),
    )
    report = await runner.run(clarify_task(definition.name, inputs, reference), workdir)
    if not report.success or report.summary is None:
        return AgentPlan(None, report)
    proposed = {
        key: InferredValue(
            value=_value(entry["value"]), source=f"{AGENT_SOURCE}: {entry['source']}"
        )
        for key, entry in report.summary.get("inferred", {}).items()
        if key not in reference.inferred and key not in reference.responses
    }
    plan = plan_task(definition, workdir, context=context, responses=responses,
                     questions_per_turn=questions_per_turn, proposed=proposed)  # fmt: skip
    return AgentPlan(plan, report)


def _value(raw: object) -> str | tuple[str, ...]:
    return tuple(str(item) for item in raw) if isinstance(raw, list) else str(raw)
