"""A request's inputs: the plan of ``POST /v1/plans`` and the values a run starts with.

Both read the work directory and never change it (the reference planner), and never the
service's environment: ``env`` rules find nothing over HTTP, since a client may send any
task, and an ``env`` rule naming a secret would hand it back in the plan. A run's values are
resolved when the run is accepted, not when it starts: what was checked is what runs, even
if the directory changes while the run waits in the queue. Problems are answered before
anything is queued: a plan that no longer matches is a 409 (plan again), a missing or
refused value a 422 naming every input at fault.
"""

from __future__ import annotations

from pathlib import Path

from phasegate._files.limits import ParseProblem
from phasegate._server.problems import RequestProblem, root_relative
from phasegate._server.resolving import ResolvedRequest
from phasegate.client.schema import PlanRequest, RunRequest
from phasegate.errors import InputsInvalidError, PlanFileError, StalePlanError, UsageError
from phasegate.planning.plan import Plan
from phasegate.planning.reference import plan_task
from phasegate.planning.values import InputValues, resolve_inputs

NO_ENVIRONMENT: dict[str, str] = {}
"""What ``env`` inference rules read over HTTP: nothing."""


def plan_for(resolved: ResolvedRequest, request: PlanRequest) -> Plan:
    """The reference plan a ``POST /v1/plans`` asks for."""
    try:
        return plan_task(resolved.definition, resolved.workdir, context=request.context,
                         responses=request.responses, environ=NO_ENVIRONMENT,
                         questions_per_turn=request.questions_per_turn)  # fmt: skip
    except UsageError as exc:
        raise RequestProblem(422, "invalid_plan_request", str(exc), field=exc.option) from None


def run_values(resolved: ResolvedRequest, request: RunRequest, root: Path) -> InputValues | None:
    """The input values a run starts with (None when its definition has no inputs and the
    request gives none)."""
    if not resolved.definition.all_inputs and request.inputs is None and request.plan is None:
        return None
    try:
        plan = (
            Plan.model_validate(request.plan)
            if request.plan is not None
            else plan_task(
                resolved.definition,
                resolved.workdir,
                context=request.context,
                environ=NO_ENVIRONMENT,
            )
        )
        return resolve_inputs(
            resolved.definition, resolved.workdir, plan, request.inputs, environ=NO_ENVIRONMENT
        )
    except StalePlanError as exc:
        message = root_relative(str(exc), root)
        raise RequestProblem(409, "stale_plan", message, field="plan") from None
    except InputsInvalidError as exc:
        raise RequestProblem(422, "invalid_inputs", str(exc), field="inputs") from None
    except (ValueError, ParseProblem, PlanFileError) as exc:
        raise RequestProblem(422, "invalid_plan", f"plan is not a plan: {exc}",
                             field="plan") from None  # fmt: skip
    except UsageError as exc:
        raise RequestProblem(422, "invalid_inputs", str(exc), field=exc.option) from None
