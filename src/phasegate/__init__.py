"""phasegate: make coding agents do structured, phased work, and prove they did it.

The public API is what ``__all__`` lists; everything else may move between versions.
"""

from phasegate.errors import (
    AgentError,
    PhasegateError,
    PromptTemplateError,
    RunError,
    ScriptFileError,
    TaskFileError,
    UsageError,
)
from phasegate.evidence.stream_json import parse_stream_json
from phasegate.evidence.transcript import Transcript, Usage
from phasegate.evidence.workspace import WorkspaceDiff
from phasegate.phases.loading import load_task
from phasegate.phases.markers import find_markers, marker_line
from phasegate.phases.model import Phase, Task
from phasegate.prompts.feedback import FeedbackPrompt
from phasegate.prompts.phased import phased_prompt, unstructured_prompt
from phasegate.prompts.templates import PromptTemplates
from phasegate.sdk.agent import Agent, AgentObserver, AgentRequest
from phasegate.sdk.event_log import EventLog
from phasegate.sdk.events import RunEvent
from phasegate.sdk.gate import PhaseGate
from phasegate.sdk.report import Mode, PhaseReport, RunReport
from phasegate.sdk.revert import RevertReport
from phasegate.sdk.runner import Runner
from phasegate.sdk.saved import judge_transcript, read_transcript
from phasegate.validators.issues import Issue, IssueCode
from phasegate.validators.judge import Judgment, judge
from phasegate.validators.reconcile import FileReconciliation

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
    "Phase",
    "PhaseGate",
    "PhaseReport",
    "PhasegateError",
    "PromptTemplateError",
    "PromptTemplates",
    "RevertReport",
    "RunError",
    "RunEvent",
    "RunReport",
    "Runner",
    "ScriptFileError",
    "Task",
    "TaskFileError",
    "Transcript",
    "Usage",
    "UsageError",
    "WorkspaceDiff",
    "find_markers",
    "judge",
    "judge_transcript",
    "load_task",
    "marker_line",
    "parse_stream_json",
    "phased_prompt",
    "read_transcript",
    "unstructured_prompt",
]
