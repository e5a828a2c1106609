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
    from phasegate.sdk.agents.claude.adapter import ClaudeAgent
    from phasegate.sdk.agents.protocol import Agent, AgentObserver, AgentRequest
    from phasegate.sdk.agents.retry import RetryPolicy
    from phasegate.sdk.batches.executor import Executor, ExecutorError
    from phasegate.sdk.batches.loading import Batch, load_batch
    from phasegate.sdk.batches.local import LocalExecutor
    from phasegate.sdk.batches.outcome import AgentFactory, UnitAgent, UnitOutcome
    from phasegate.sdk.batches.ray_executor import RayExecutor
    from phasegate.sdk.batches.runner import BatchRunner, BatchSummary
    from phasegate.sdk.batches.units import Unit
    from phasegate.sdk.pipelines.report import PipelineReport
    from phasegate.sdk.pipelines.runner import PipelineRunner
    from phasegate.sdk.planning.agent_planner import AgentPlan, plan_with_agent
    from phasegate.sdk.tasks.report import PhaseReport, RunReport
    from phasegate.sdk.tasks.runner import Runner
    from phasegate.sdk.tasks.saved import judge_transcript, read_transcript
    from phasegate.sdk.telemetry.events import EventSink, RunEvent
    from phasegate.sdk.telemetry.log import EventLog
    from phasegate.sdk.telemetry.otel import OtelSink
    from phasegate.validators.issues import Issue, IssueCode

# Names resolve on first use, so `phasegate --help` and `phasegate report` do not pay for
# pydantic, jsonschema and structlog they never touch.
_WHERE = {
    "Agent": "phasegate.sdk.agents.protocol",
    "AgentError": "phasegate.errors",
    "AgentFactory": "phasegate.sdk.batches.outcome",
    "AgentObserver": "phasegate.sdk.agents.protocol",
    "AgentRequest": "phasegate.sdk.agents.protocol",
    "Batch": "phasegate.sdk.batches.loading",
    "BatchFileError": "phasegate.errors",
    "BatchRunner": "phasegate.sdk.batches.runner",
    "BatchSummary": "phasegate.sdk.batches.runner",
    "ClaudeAgent": "phasegate.sdk.agents.claude.adapter",
    "ClaudeCodeVersionWarning": "phasegate.errors",
    "EventLog": "phasegate.sdk.telemetry.log",
    "EventSink": "phasegate.sdk.telemetry.events",
    "Executor": "phasegate.sdk.batches.executor",
    "ExecutorError": "phasegate.sdk.batches.executor",
    "InputsInvalidError": "phasegate.errors",
    "Isolation": "phasegate.modes",
    "Issue": "phasegate.validators.issues",
    "IssueCode": "phasegate.validators.issues",
    "LocalExecutor": "phasegate.sdk.batches.local",
    "Mode": "phasegate.modes",
    "OtelSink": "phasegate.sdk.telemetry.otel",
    "Phase": "phasegate.phases.model",
    "PhaseReport": "phasegate.sdk.tasks.report",
    "PhasegateError": "phasegate.errors",
    "PhasegateWarning": "phasegate.errors",
    "Pipeline": "phasegate.phases.pipeline",
    "PipelineFileError": "phasegate.errors",
    "PipelineReport": "phasegate.sdk.pipelines.report",
    "PipelineRunner": "phasegate.sdk.pipelines.runner",
    "PipelineStateError": "phasegate.errors",
    "Plan": "phasegate.planning.plan",
    "PlanFileError": "phasegate.errors",
    "PromptTemplateError": "phasegate.errors",
    "RayExecutor": "phasegate.sdk.batches.ray_executor",
    "RetryPolicy": "phasegate.sdk.agents.retry",
    "RunError": "phasegate.errors",
    "RunEvent": "phasegate.sdk.telemetry.events",
    "RunReport": "phasegate.sdk.tasks.report",
    "Runner": "phasegate.sdk.tasks.runner",
    "ScriptFileError": "phasegate.errors",
    "Stage": "phasegate.phases.pipeline",
    "StalePlanError": "phasegate.errors",
    "Task": "phasegate.phases.model",
    "TaskFileError": "phasegate.errors",
    "Unit": "phasegate.sdk.batches.units",
    "UnitAgent": "phasegate.sdk.batches.outcome",
    "UnitOutcome": "phasegate.sdk.batches.outcome",
    "UsageError": "phasegate.errors",
    "judge_transcript": "phasegate.sdk.tasks.saved",
    "load_batch": "phasegate.sdk.batches.loading",
    "load_pipeline": "phasegate.phases.pipeline",
    "load_task": "phasegate.phases.loading",
    "plan_task": "phasegate.planning.reference",
    "plan_with_agent": "phasegate.sdk.planning.agent_planner",
    "AgentPlan": "phasegate.sdk.planning.agent_planner",
    "read_transcript": "phasegate.sdk.tasks.saved",
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
