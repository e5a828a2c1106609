# The public API of this package, declared once: each `from M import Name as Name` below is
# a public name, read by phasegate._lazy for __all__ and the lazy imports (see __init__.py).

from phasegate.agents.claude.adapter import ClaudeAgent as ClaudeAgent
from phasegate.agents.protocol import Agent as Agent
from phasegate.agents.protocol import AgentObserver as AgentObserver
from phasegate.agents.protocol import AgentRequest as AgentRequest
from phasegate.agents.retry import RetryPolicy as RetryPolicy
from phasegate.batches.executor import Executor as Executor
from phasegate.batches.executor import ExecutorError as ExecutorError
from phasegate.batches.loading import Batch as Batch
from phasegate.batches.loading import load_batch as load_batch
from phasegate.batches.local import LocalExecutor as LocalExecutor
from phasegate.batches.outcome import AgentFactory as AgentFactory
from phasegate.batches.outcome import UnitAgent as UnitAgent
from phasegate.batches.outcome import UnitOutcome as UnitOutcome
from phasegate.batches.ray_executor import RayExecutor as RayExecutor
from phasegate.batches.runner import BatchRunner as BatchRunner
from phasegate.batches.runner import BatchSummary as BatchSummary
from phasegate.batches.units import Unit as Unit
from phasegate.errors import AgentError as AgentError
from phasegate.errors import BatchFileError as BatchFileError
from phasegate.errors import ClaudeCodeVersionWarning as ClaudeCodeVersionWarning
from phasegate.errors import InputsInvalidError as InputsInvalidError
from phasegate.errors import PhasegateError as PhasegateError
from phasegate.errors import PhasegateWarning as PhasegateWarning
from phasegate.errors import PipelineFileError as PipelineFileError
from phasegate.errors import PipelineStateError as PipelineStateError
from phasegate.errors import PlanFileError as PlanFileError
from phasegate.errors import PromptTemplateError as PromptTemplateError
from phasegate.errors import RecordingError as RecordingError
from phasegate.errors import RecordingFolderError as RecordingFolderError
from phasegate.errors import ResultOnlyTranscriptError as ResultOnlyTranscriptError
from phasegate.errors import RunError as RunError
from phasegate.errors import ScriptFileError as ScriptFileError
from phasegate.errors import StalePlanError as StalePlanError
from phasegate.errors import TaskFileError as TaskFileError
from phasegate.errors import UsageError as UsageError
from phasegate.evidence.confinement import Blocked as Blocked
from phasegate.modes import Isolation as Isolation
from phasegate.modes import Mode as Mode
from phasegate.phases.loading import load_task as load_task
from phasegate.phases.loop import Loop as Loop
from phasegate.phases.loop import make_loop as make_loop
from phasegate.phases.model import Phase as Phase
from phasegate.phases.model import Task as Task
from phasegate.phases.pipeline import Pipeline as Pipeline
from phasegate.phases.pipeline import Stage as Stage
from phasegate.phases.pipeline import load_pipeline as load_pipeline
from phasegate.phases.ralph import RalphState as RalphState
from phasegate.phases.ralph import read_ralph_state as read_ralph_state
from phasegate.phases.sandbox import Sandbox as Sandbox
from phasegate.phases.sandbox import SandboxOutcome as SandboxOutcome
from phasegate.pipelines.loop import LoopReport as LoopReport
from phasegate.pipelines.loop import LoopRunner as LoopRunner
from phasegate.pipelines.report import PipelineReport as PipelineReport
from phasegate.pipelines.runner import PipelineRunner as PipelineRunner
from phasegate.planning.agent_planner import AgentPlan as AgentPlan
from phasegate.planning.agent_planner import plan_with_agent as plan_with_agent
from phasegate.planning.ask_user_question import normalize_responses as normalize_responses
from phasegate.planning.ask_user_question import relay_follow_ups as relay_follow_ups
from phasegate.planning.ask_user_question import relayed_answers as relayed_answers
from phasegate.planning.ask_user_question import (
    responses_from_ask_user_question as responses_from_ask_user_question,
)
from phasegate.planning.ask_user_question import to_ask_user_question as to_ask_user_question
from phasegate.planning.clarification import check_proposal as check_proposal
from phasegate.planning.plan import InferredValue as InferredValue
from phasegate.planning.plan import Plan as Plan
from phasegate.planning.plan import load_plan as load_plan
from phasegate.planning.reference import plan_task as plan_task
from phasegate.planning.values import InputValues as InputValues
from phasegate.planning.values import resolve_inputs as resolve_inputs
from phasegate.recording.page import render_page as render_page
from phasegate.recording.page import write_page as write_page
from phasegate.tasks.report import PhaseReport as PhaseReport
from phasegate.tasks.report import RunReport as RunReport
from phasegate.tasks.runner import Runner as Runner
from phasegate.tasks.saved import judge_transcript as judge_transcript
from phasegate.tasks.saved import read_transcript as read_transcript
from phasegate.telemetry.events import EventSink as EventSink
from phasegate.telemetry.events import RunEvent as RunEvent
from phasegate.telemetry.log import EventLog as EventLog
from phasegate.telemetry.otel import OtelSink as OtelSink
from phasegate.validators.issues import Issue as Issue
from phasegate.validators.issues import IssueCode as IssueCode

__all__: list[str]
