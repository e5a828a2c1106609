"""Every error phasegate raises, in one tree.

::

    PhasegateError                 base of everything below
    ├── UsageError                 you asked for something that cannot work (exit code 2)
    │   ├── TaskFileError          a task file is unreadable or invalid (file, field)
    │   ├── ScriptFileError        a scripted-agent script is unreadable or invalid (file, field)
    │   ├── PipelineFileError      a pipeline file is unreadable or invalid (file, field)
    │   ├── PipelineStateError     a pipeline state file cannot be resumed from (file, field)
    │   ├── LoopStateError         a Ralph loop state file is unreadable or invalid (file, line)
    │   ├── PlanFileError          a plan file is unreadable or invalid (file, field)
    │   ├── RecordingError         a recording folder is missing, foreign or damaged (file, field)
    │   ├── InputsInvalidError     a task's input values are missing or refused (errors)
    │   ├── StalePlanError         a plan no longer matches its task, context or work directory
    │   ├── LinkedPathError        a folder phasegate writes in is a link out of its folder (path)
    │   ├── RecordingFolderError   a recording's folder holds something else (folder)
    │   ├── ResultOnlyTranscriptError  a saved transcript is a run's result alone, no messages
    │   ├── IdempotencyKeyError    an idempotency key that cannot be one
    │   │   └── IdempotencyKeyReusedError  the same key sent with another request
    │   └── PromptTemplateError    a prompt template is missing or has an unknown placeholder
    └── RunError                   the run itself failed (exit code 3)
        └── AgentError             the agent crashed, timed out or lost its API

    PhasegateWarning (UserWarning) worth knowing, but the work goes on (``warnings.warn``)
    └── ClaudeCodeVersionWarning   the Claude Code CLI is outside the tested window

A *rejected* run is not an error: it is a normal result (``RunReport.verdict ==
"rejected"``, exit code 1), so no error has exit code 1. Errors are for input that cannot be
used and for runs that could not be carried out. Third-party exceptions (YAML, JSON Schema,
claude-agent-sdk) are translated into these at the boundary, so callers never catch a
library's exception. Warnings are issued with :func:`warnings.warn`, so the usual filters
decide whether they are shown, ignored or raised; the command line shows them as
``phasegate: warning: ...`` on stderr.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path


class PhasegateError(Exception):
    """Base class of every phasegate error.

    ``exit_code`` is what a command line ends with: 2 for usage errors, 3 for everything
    else (the work could not be carried out). ``option`` names the keyword argument of the
    call that would change the outcome (``timeout``, ``restart``), so a front end can name
    its own spelling of it; messages never name command-line flags.
    """

    exit_code: int = 3

    def __init__(self, *args: object, option: str | None = None) -> None:
        super().__init__(*args)
        self.option = option


class UsageError(PhasegateError):
    """The input cannot be used: a bad file, a bad argument, a missing setting."""

    exit_code = 2


class _FileFieldError(UsageError):
    """A usage error that points at a field of a file."""

    kind = "file"

    def __init__(
        self,
        path: Path | str | None,
        field: str | None,
        problem: str,
        *,
        option: str | None = None,
    ) -> None:
        self.path = Path(path) if path is not None else None
        self.field = field
        self.problem = problem
        where = str(self.path) if self.path is not None else f"<{self.kind}>"
        if field:
            where += f": {field}"
        super().__init__(f"{where}: {problem}", option=option)


class TaskFileError(_FileFieldError):
    """A task file (or task data) is invalid.

    ``path`` is the file (None for a task built in Python), ``field`` the dotted location of
    the problem (``phases.1.output_schema``), ``problem`` what is wrong and what is expected.
    """

    kind = "task"


class ScriptFileError(_FileFieldError):
    """A scripted-agent script is invalid; same fields as :class:`TaskFileError`."""

    kind = "script"


class PipelineFileError(_FileFieldError):
    """A pipeline file is invalid; same fields as :class:`TaskFileError`."""

    kind = "pipeline"


class BatchFileError(_FileFieldError):
    """A batch file is invalid, or names a task, pipeline, work directory or script that is
    not there; same fields as :class:`TaskFileError`."""

    kind = "batch"


class PipelineStateError(_FileFieldError):
    """A pipeline state file (``.phasegate/pipeline-state.json``) is unreadable, corrupt, or
    belongs to another pipeline; phasegate never restarts a run from scratch on its own."""

    kind = "pipeline state"


class LoopStateError(_FileFieldError):
    """A Ralph loop state file (``.claude/ralph-loop.local.md``) cannot be read as a loop;
    ``field`` names the line (``line 3 (iteration)``). phasegate never deletes the file."""

    kind = "loop state"


class PlanFileError(_FileFieldError):
    """A plan file (the JSON a plan printed) is invalid; same fields as
    :class:`TaskFileError`."""

    kind = "plan"


class RecordingError(_FileFieldError):
    """A recording folder cannot be read as one: missing, not a recording, of a newer
    ``recording_version``, or a file in it damaged. ``path`` is the file (or the folder),
    ``field`` the key or line that is wrong (``parts.0.entries``, ``line 12``)."""

    kind = "recording"


class PromptTemplateError(UsageError):
    """A prompt template is missing or uses a placeholder phasegate does not provide."""


class LinkedPathError(UsageError):
    """A folder phasegate writes in (below the folder it was given: ``.phasegate/`` in a
    work directory, ``units/`` in a batch's output) is a symbolic link, or a file stands
    where a folder should: phasegate never writes, replaces or deletes through a link, since
    it may lead out of the folder. ``root`` is the folder it was given, ``problem`` says which
    step is in the way."""

    def __init__(self, root: Path, problem: str, *, option: str | None = None) -> None:
        self.root = root
        self.problem = problem
        super().__init__(
            f"{root}: {problem}; phasegate writes only inside it: remove what is in the way, "
            "or use another folder",
            option=option,
        )


class RecordingFolderError(UsageError):
    """The folder a recording was asked for cannot take it: it holds something that is not
    an earlier recording, or is not a folder. ``folder`` names it; nothing in it is touched."""

    def __init__(self, folder: Path, problem: str) -> None:
        super().__init__(
            f"cannot record the run into {folder}: {problem}; a recording replaces only an "
            "earlier recording or an empty folder, so name a new folder or empty this one",
            option="record",
        )
        self.folder = folder


class ResultOnlyTranscriptError(UsageError):
    """A transcript file holds a run's result and no messages (what ``claude -p
    --output-format json`` prints): nothing to judge. The result's own figures are kept:
    ``cost_usd``, ``num_turns`` and ``duration_ms`` (None when it had none)."""

    def __init__(
        self,
        message: str,
        *,
        cost_usd: float | None,
        num_turns: int | None,
        duration_ms: int | None,
    ) -> None:
        super().__init__(message)
        self.cost_usd = cost_usd
        self.num_turns = num_turns
        self.duration_ms = duration_ms


class IdempotencyKeyError(UsageError):
    """An idempotency key that cannot be one: empty, too long, or not printable ASCII."""


class IdempotencyKeyReusedError(IdempotencyKeyError):
    """An idempotency key sent again with a different request: a new request needs a new key."""


@dataclass(frozen=True, slots=True)
class InputProblem:
    """Why one input value cannot be used: the ``field`` (an input id, or ``<id>__other``),
    the value ``provided`` (None when there is none), the ``problem`` and the
    ``requirement`` a value must meet."""

    field: str
    provided: str | None
    problem: str
    requirement: str

    def __str__(self) -> str:
        return f"{self.field}: {self.problem}; {self.requirement}"


class InputsInvalidError(UsageError):
    """A task's input values cannot be used: a required one is missing, or an answer was
    refused (TBD, not an option, not an input). ``errors`` lists every problem."""

    def __init__(self, errors: Iterable[InputProblem]) -> None:
        self.errors = tuple(errors)
        lines = "; ".join(str(error) for error in self.errors)
        super().__init__(f"the input values cannot be used: {lines}", option="inputs")


class StalePlanError(UsageError):
    """A plan was made for another version of the task, its context or its work directory:
    planning again with the same context and responses gives another plan id."""

    def __init__(self, message: str) -> None:
        super().__init__(message, option="plan")


class RunError(PhasegateError):
    """The run could not be carried out (agent, API, timeout): exit code 3."""

    exit_code = 3


class AgentError(RunError):
    """The agent failed: it crashed, timed out, or its model API kept failing.

    ``transient`` says whether retrying the same request might succeed; ``option`` as on
    :class:`PhasegateError`.
    """

    def __init__(self, message: str, *, transient: bool = False, option: str | None = None) -> None:
        self.transient = transient
        super().__init__(message, option=option)


class PhasegateWarning(UserWarning):
    """Base class of the warnings phasegate issues: something to know, never a failure."""


class ClaudeCodeVersionWarning(PhasegateWarning):
    """A Claude Code run starts with a CLI outside the window of releases phasegate is tested
    with (older, newer, or known not to work with it). Issued once per process and version;
    the run goes on."""
