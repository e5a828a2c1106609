"""phasegate: make coding agents do structured, phased work, and prove they did it.

The public API is what ``__all__`` lists: loading and modelling tasks and pipelines,
running them (:class:`Runner`, :class:`PipelineRunner`, :class:`ClaudeAgent`, the
:class:`Agent` protocol, :class:`RetryPolicy`), batches of them (:func:`load_batch`,
:class:`BatchRunner` and its executors), their reports, event sinks, judging saved
transcripts, and the errors and warnings. Everything else lives in the subpackages and may
move between versions; the fakes for tests are in :mod:`phasegate.testing`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from phasegate._lazy import lazy_attributes

if TYPE_CHECKING:
    from phasegate.errors import (
        AgentError,
        BatchFileError,
        ClaudeCodeVersionWarning,
        InputsInvalidError,
        PhasegateError,
        PhasegateWarning,
        PipelineFileError,
        PipelineStateError,
        PlanFileError,
        PromptTemplateError,
        RunError,
        ScriptFileError,
        StalePlanError,
        TaskFileError,
        UsageError,
    )
    from phasegate.modes import Isolation, Mode
    from phasegate.phases.loading import load_task
    from phasegate.phases.model import Phase, Task
    from phasegate.phases.pipeline import Pipeline, Stage, load_pipeline
    from phasegate.planning.plan import Plan
    from phasegate.planning.reference import plan_task
    from phasegate.agents.claude.adapter import ClaudeAgent
    from phasegate.agents.protocol import Agent, AgentObserver, AgentRequest
    from phasegate.agents.retry import RetryPolicy
    from phasegate.batches.executor import Executor, ExecutorError
    from phasegate.batches.loading import Batch, load_batch
    from phasegate.batches.local import LocalExecutor
    from phasegate.batches.outcome import AgentFactory, UnitAgent, UnitOutcome
    from phasegate.batches.ray_executor import RayExecutor
    from phasegate.batches.runner import BatchRunner, BatchSummary
    from phasegate.batches.units import Unit
    from phasegate.pipelines.report import PipelineReport
    from phasegate.pipelines.runner import PipelineRunner
    from phasegate.planning.agent_planner import AgentPlan, plan_with_agent
    from phasegate.tasks.report import PhaseReport, RunReport
    from phasegate.tasks.runner import Runner
    from phasegate.tasks.saved import judge_transcript, read_transcript
    from phasegate.telemetry.events import EventSink, RunEvent
    from phasegate.telemetry.log import EventLog
    from phasegate.telemetry.otel import OtelSink
    from phasegate.validators.issues import Issue, IssueCode

# Names resolve on first use, so `phasegate --help` and `phasegate report` do not pay for
# pydantic, jsonschema and structlog they never touch.
_WHERE = {
    "Agent": "phasegate.agents.protocol",
    "AgentError": "phasegate.errors",
    "AgentFactory": "phasegate.batches.outcome",
    "AgentObserver": "phasegate.agents.protocol",
    "AgentRequest": "phasegate.agents.protocol",
    "Batch": "phasegate.batches.loading",
    "BatchFileError": "phasegate.errors",
    "BatchRunner": "phasegate.batches.runner",
    "BatchSummary": "phasegate.batches.runner",
    "ClaudeAgent": "phasegate.agents.claude.adapter",
    "ClaudeCodeVersionWarning": "phasegate.errors",
    "EventLog": "phasegate.telemetry.log",
    "EventSink": "phasegate.telemetry.events",
    "Executor": "phasegate.batches.executor",
    "ExecutorError": "phasegate.batches.executor",
    "InputsInvalidError": "phasegate.errors",
    "Isolation": "phasegate.modes",
    "Issue": "phasegate.validators.issues",
    "IssueCode": "phasegate.validators.issues",
    "LocalExecutor": "phasegate.batches.local",
    "Mode": "phasegate.modes",
    "OtelSink": "phasegate.telemetry.otel",
    "Phase": "phasegate.phases.model",
    "PhaseReport": "phasegate.tasks.report",
    "PhasegateError": "phasegate.errors",
    "PhasegateWarning": "phasegate.errors",
    "Pipeline": "phasegate.phases.pipeline",
    "PipelineFileError": "phasegate.errors",
    "PipelineReport": "phasegate.pipelines.report",
    "PipelineRunner": "phasegate.pipelines.runner",
    "PipelineStateError": "phasegate.errors",
    "Plan": "phasegate.planning.plan",
    "PlanFileError": "phasegate.errors",
    "PromptTemplateError": "phasegate.errors",
    "RayExecutor": "phasegate.batches.ray_executor",
    "RetryPolicy": "phasegate.agents.retry",
    "RunError": "phasegate.errors",
    "RunEvent": "phasegate.telemetry.events",
    "RunReport": "phasegate.tasks.report",
    "Runner": "phasegate.tasks.runner",
    "ScriptFileError": "phasegate.errors",
    "Stage": "phasegate.phases.pipeline",
    "StalePlanError": "phasegate.errors",
    "Task": "phasegate.phases.model",
    "TaskFileError": "phasegate.errors",
    "Unit": "phasegate.batches.units",
    "UnitAgent": "phasegate.batches.outcome",
    "UnitOutcome": "phasegate.batches.outcome",
    "UsageError": "phasegate.errors",
    "judge_transcript": "phasegate.tasks.saved",
    "load_batch": "phasegate.batches.loading",
    "load_pipeline": "phasegate.phases.pipeline",
    "load_task": "phasegate.phases.loading",
    "plan_task": "phasegate.planning.reference",
    "plan_with_agent": "phasegate.planning.agent_planner",
    "AgentPlan": "phasegate.planning.agent_planner",
    "read_transcript": "phasegate.tasks.saved",
}

__all__ = [
    "Agent",
    "AgentError",
    "AgentFactory",
    "AgentObserver",
    "AgentPlan",
    "AgentRequest",
    "Batch",
    "BatchFileError",
    "BatchRunner",
    "BatchSummary",
    "ClaudeAgent",
    "ClaudeCodeVersionWarning",
    "EventLog",
    "EventSink",
    "Executor",
    "ExecutorError",
    "InputsInvalidError",
    "Isolation",
    "Issue",
    "IssueCode",
    "LocalExecutor",
    "Mode",
    "OtelSink",
    "Phase",
    "PhaseReport",
    "PhasegateError",
    "PhasegateWarning",
    "Pipeline",
    "PipelineFileError",
    "PipelineReport",
    "PipelineRunner",
    "PipelineStateError",
    "Plan",
    "PlanFileError",
    "PromptTemplateError",
    "RayExecutor",
    "RetryPolicy",
    "RunError",
    "RunEvent",
    "RunReport",
    "Runner",
    "ScriptFileError",
    "Stage",
    "StalePlanError",
    "Task",
    "TaskFileError",
    "Unit",
    "UnitAgent",
    "UnitOutcome",
    "UsageError",
    "judge_transcript",
    "load_batch",
    "load_pipeline",
    "load_task",
    "plan_task",
    "plan_with_agent",
    "read_transcript",
]


__getattr__, __dir__ = lazy_attributes(__name__, _WHERE)
