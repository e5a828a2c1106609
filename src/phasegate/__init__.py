"""phasegate: make coding agents do structured, phased work, and prove they did it.

The public API is what ``__all__`` lists; everything else may move between versions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from phasegate._lazy import lazy_attributes

if TYPE_CHECKING:
    from phasegate.errors import (
        AgentError,
        PhasegateError,
        PipelineFileError,
        PipelineStateError,
        PromptTemplateError,
        RunError,
        ScriptFileError,
        TaskFileError,
        UsageError,
    )
    from phasegate.evidence.stream_json import parse_stream_json
    from phasegate.evidence.transcript import Transcript, Usage
    from phasegate.evidence.workspace import WorkspaceDiff
    from phasegate.modes import Mode
    from phasegate.phases.loading import load_task
    from phasegate.phases.markers import find_markers, marker_line
    from phasegate.phases.model import Phase, Task
    from phasegate.phases.pipeline import Pipeline, Stage, load_pipeline
    from phasegate.prompts.feedback import FeedbackPrompt
    from phasegate.prompts.phased import phased_prompt, unstructured_prompt
    from phasegate.prompts.templates import PromptTemplates
    from phasegate.sdk.agents.protocol import Agent, AgentObserver, AgentRequest
    from phasegate.sdk.pipelines.report import PipelineReport
    from phasegate.sdk.pipelines.runner import PipelineRunner
    from phasegate.sdk.tasks.gate import PhaseGate
    from phasegate.sdk.tasks.report import PhaseReport, RunReport
    from phasegate.sdk.tasks.runner import Runner
    from phasegate.sdk.tasks.saved import judge_transcript, read_transcript
    from phasegate.sdk.telemetry.events import RunEvent
    from phasegate.sdk.telemetry.log import EventLog
    from phasegate.sdk.telemetry.otel import OtelSink
    from phasegate.sdk.workspace.revert import RevertReport
    from phasegate.validators.issues import Issue, IssueCode
    from phasegate.validators.judge import Judgment, judge
    from phasegate.validators.reconcile import FileReconciliation

# Names resolve on first use, so `phasegate --help` and `phasegate report` do not pay for
# pydantic, jsonschema and structlog they never touch.
_WHERE = {
    "Agent": "phasegate.sdk.agents.protocol",
    "AgentError": "phasegate.errors",
    "AgentObserver": "phasegate.sdk.agents.protocol",
    "AgentRequest": "phasegate.sdk.agents.protocol",
    "EventLog": "phasegate.sdk.telemetry.log",
    "FeedbackPrompt": "phasegate.prompts.feedback",
    "FileReconciliation": "phasegate.validators.reconcile",
    "Issue": "phasegate.validators.issues",
    "IssueCode": "phasegate.validators.issues",
    "Judgment": "phasegate.validators.judge",
    "Mode": "phasegate.modes",
    "Phase": "phasegate.phases.model",
    "OtelSink": "phasegate.sdk.telemetry.otel",
    "PhaseGate": "phasegate.sdk.tasks.gate",
    "PhaseReport": "phasegate.sdk.tasks.report",
    "PhasegateError": "phasegate.errors",
    "Pipeline": "phasegate.phases.pipeline",
    "PipelineFileError": "phasegate.errors",
    "PipelineReport": "phasegate.sdk.pipelines.report",
    "PipelineRunner": "phasegate.sdk.pipelines.runner",
    "PipelineStateError": "phasegate.errors",
    "PromptTemplateError": "phasegate.errors",
    "PromptTemplates": "phasegate.prompts.templates",
    "RevertReport": "phasegate.sdk.workspace.revert",
    "RunError": "phasegate.errors",
    "RunEvent": "phasegate.sdk.telemetry.events",
    "RunReport": "phasegate.sdk.tasks.report",
    "Runner": "phasegate.sdk.tasks.runner",
    "ScriptFileError": "phasegate.errors",
    "Stage": "phasegate.phases.pipeline",
    "Task": "phasegate.phases.model",
    "TaskFileError": "phasegate.errors",
    "Transcript": "phasegate.evidence.transcript",
    "Usage": "phasegate.evidence.transcript",
    "UsageError": "phasegate.errors",
    "WorkspaceDiff": "phasegate.evidence.workspace",
    "find_markers": "phasegate.phases.markers",
    "judge": "phasegate.validators.judge",
    "judge_transcript": "phasegate.sdk.tasks.saved",
    "load_pipeline": "phasegate.phases.pipeline",
    "load_task": "phasegate.phases.loading",
    "marker_line": "phasegate.phases.markers",
    "parse_stream_json": "phasegate.evidence.stream_json",
    "phased_prompt": "phasegate.prompts.phased",
    "read_transcript": "phasegate.sdk.tasks.saved",
    "unstructured_prompt": "phasegate.prompts.phased",
}

__all__ = [
    "Agent",
    "AgentError",
    "AgentObserver",
    "AgentRequest",
    "EventLog",
    "FeedbackPrompt",
    "FileReconciliation",
    "Issue",
    "IssueCode",
    "Judgment",
    "Mode",
    "OtelSink",
    "Phase",
    "PhaseGate",
    "PhaseReport",
    "PhasegateError",
    "Pipeline",
    "PipelineFileError",
    "PipelineReport",
    "PipelineRunner",
    "PipelineStateError",
    "PromptTemplateError",
    "PromptTemplates",
    "RevertReport",
    "RunError",
    "RunEvent",
    "RunReport",
    "Runner",
    "ScriptFileError",
    "Stage",
    "Task",
    "TaskFileError",
    "Transcript",
    "Usage",
    "UsageError",
    "WorkspaceDiff",
    "find_markers",
    "judge",
    "judge_transcript",
    "load_pipeline",
    "load_task",
    "marker_line",
    "parse_stream_json",
    "phased_prompt",
    "read_transcript",
    "unstructured_prompt",
]


__getattr__, __dir__ = lazy_attributes(__name__, _WHERE)
