"""A deterministic in-process agent that replays a script of model replies
(:class:`~phasegate.agents.scripted.script.Script`).

It runs no CLI and no model: each reply's tool calls are applied to the work directory for
real (Read, Edit, MultiEdit, Write), with the same success and error rules a coding agent
runtime has, so the runner and its gate can be tested in milliseconds. Paths outside the work
directory are denied, as Claude Code denies them in ``acceptEdits`` mode, and so are paths
that lead out of it through a symbolic link; a file that cannot be written (a read-only
directory, a file where a directory should be) is an error result, never an exception.

The completion tools the request offers are answered by the runner, as Claude Code's MCP
calls are. With an ``output_schema``, ``StructuredOutput`` behaves as in Claude Code: input
that breaks the schema is an error result, a valid one ends the session at once, and five
refused attempts end it with ``error_max_structured_output_retries``.

It can be a run's grader too (:meth:`ScriptedAgent.grading_agent`): the agent a grader runs
replays the same script's ``grader: true`` replies, and only those.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jsonschema

from phasegate._files.confined import OutsideFolderError, resolve_inside
from phasegate.agents.claude.failures import STRUCTURED_OUTPUT_GAVE_UP
from phasegate.agents.protocol import AgentObserver, AgentRequest
from phasegate.agents.scripted._requests import branch_of
from phasegate.agents.scripted.script import (
    UNMATCHED_PREFIX,
    LastInput,
    Script,
    ScriptCursor,
    ToolStep,
    Unmatched,
)
from phasegate.errors import AgentError
from phasegate.evidence.transcript import (
    AssistantText,
    RunResult,
    SessionStart,
    ToolCall,
    ToolResult,
)
from phasegate.phases.completion import STRUCTURED_OUTPUT_TOOL, full_tool_name
from phasegate.validators.paths import relative_to_workdir

if TYPE_CHECKING:
    from phasegate.phases.grader import GraderSettings

STRUCTURED_OUTPUT_ATTEMPTS = 5
"""Refused StructuredOutput calls after which the session gives up, as Claude Code does."""


class _ToolError(Exception):
    """A tool call failed; the message is what the agent sees."""


class _SessionOver(Exception):
    """The runtime ends the session here (a structured output was given, or refused too often)."""

    def __init__(self, result: RunResult) -> None:
        self.result = result


class ScriptedAgent:
    """Replays ``script`` as an agent; the same script always produces the same transcript.

    A fresh (not resumed) session starts the script over, as a deterministic model would
    answer the same prompt the same way; with ``continue_script`` it goes on where the last
    session stopped instead, as one model serving a series of sessions (a pipeline with a
    session per stage).

    A grader's agent (:meth:`grading_agent`) reads only the ``grader: true`` replies and goes
    on where its last session stopped, whatever ``continue_script`` says: the grader
    sessions of a run share one place in the script.
    """

    name = "scripted"

    def __init__(
        self,
        script: Script,
        *,
        continue_script: bool = False,
        grader_settings: GraderSettings | None = None,
    ) -> None:
        self.script = script
        self.continue_script = continue_script
        self.grader_settings = grader_settings
        """Set when this agent is a grader's (:meth:`grading_agent`): it then uses only
        ``grader: true`` replies; None for a run's own agent."""
        self._cursor: ScriptCursor | None = None
        self._graders: list[ScriptedAgent] = []
        """The agents :meth:`grading_agent` gave, whose unmatched turns this one lists too."""
        self._calls = 0
        self._refused = 0
        self._forks = 0

    @property
    def unmatched(self) -> list[Unmatched]:
        """Every turn that replies were left for but none matched, since the script
        (re)started; then those of the graders' agents it gave (:meth:`grading_agent`)."""
        own = list(self._cursor.unmatched) if self._cursor is not None else []
        return own + [turn for grader in self._graders for turn in grader.unmatched]

    def grading_agent(self, settings: GraderSettings) -> ScriptedAgent:
        """The agent a grader of this run runs: a scripted agent over the same script that
        uses only its ``grader: true`` replies, from the first one; the same object keeps
        its place across the grader sessions it runs. ``settings`` are kept as
        :attr:`grader_settings` (a scripted model has no model, turns or cost to bound)."""
        grader = ScriptedAgent(self.script, grader_settings=settings)
        self._graders.append(grader)
        return grader

    async def run(self, request: AgentRequest, observer: AgentObserver) -> None:
        """Replay the script in ``request.workdir``, asking ``observer`` whenever it stops."""
        workdir = request.workdir.resolve()
        # Resuming continues the script where the failed session left it, as a real session
        # would continue its conversation; a fresh run starts the script over.
        branch = branch_of(str(workdir))
        fresh = (
            request.resume is None
            and not self.continue_script
            and branch is None
            and self.grader_settings is None
        )
        if self._cursor is None or fresh:
            self._cursor, self._calls = ScriptCursor(self.script), 0
        cursor = self._cursor
        # A fork goes on from the resumed session's place in the script, under an id of its own.
        session_id = "scripted" if self.grader_settings is None else "scripted-grader"
        if request.fork and request.resume is not None:
            self._forks += 1
            session_id = f"scripted-fork-{self._forks}"
        observer.on_entry(SessionStart(cwd=str(workdir), model="scripted", session_id=session_id))
        self._refused = 0
        try:
            await self._replay(request, observer, cursor)
        except _SessionOver as over:
            observer.on_entry(over.result)

    async def _replay(
        self, request: AgentRequest, observer: AgentObserver, cursor: ScriptCursor
    ) -> None:
        branch = branch_of(str(request.workdir.resolve()))
        grader = self.grader_settings is not None
        last: LastInput = "start" if request.resume is None else "user"
        last_text = request.prompt
        turns = 0
        while True:
            seen = len(cursor.unmatched)
            reply = cursor.next_reply(last, last_text, branch=branch, grader=grader)
            if reply is None and len(cursor.unmatched) > seen:
                # Said, not skipped in silence: the transcript shows why the script stopped.
                observer.on_entry(
                    AssistantText(text=f"{UNMATCHED_PREFIX} {cursor.unmatched[-1].describe()}")
                )
            if reply is not None and (reply.error is not None or reply.hang):
                what = (
                    f"HTTP {reply.error.status}" if reply.error else "a request that never answered"
                )
                raise AgentError(
                    f"scripted model failure: {what}", transient=reply.error is not None
                )
            if reply is not None:
                turns += 1
                if reply.delay:
                    await asyncio.sleep(reply.delay)  # as slow as the model server would be
                if reply.text:
                    observer.on_entry(AssistantText(text=reply.text))
                if reply.tools:
                    outcomes = []
                    for step in reply.tools:
                        self._calls += 1
                        call_id = f"toolu_scripted_{self._calls:04d}"
                        outcomes.append(await self._call(step, call_id, request, observer, turns))
                    last = "tool_result" if all(ok for ok, _ in outcomes) else "tool_error"
                    last_text = "\n".join(text for _, text in outcomes)
                    continue
            follow_up = await observer.on_stop()
            if follow_up is None:
                break
            last, last_text = "user", follow_up
        observer.on_entry(RunResult(subtype="success", num_turns=turns, duration_ms=0))

    async def _call(
        self,
        step: ToolStep,
        call_id: str,
        request: AgentRequest,
        observer: AgentObserver,
        turns: int,
    ) -> tuple[bool, str]:
        workdir = request.workdir.resolve()
        arguments = dict(step.input)
        for key in ("file_path", "notebook_path"):
            if isinstance(arguments.get(key), str):
                arguments[key] = str(workdir / arguments[key])
        call = ToolCall(id=call_id, name=step.tool, input=arguments)
        observer.on_entry(call)
        offered = {full_tool_name(spec.name): spec.name for spec in request.tools}
        checked = request.check_before
        refusal = observer.before_tool(call) if checked == "all" or step.tool in checked else None
        if refusal is not None:
            # As Claude Code answers a call its PreToolUse hook denied: an error, unrun.
            content, ok = refusal, False
        elif step.tool in offered:
            answer = await observer.on_tool_call(offered[step.tool], arguments)
            content, ok = answer.text, answer.ok
        elif step.tool == STRUCTURED_OUTPUT_TOOL and request.output_schema is not None:
            content, ok = self._structured_output(arguments, request.output_schema)
        else:
            handler = _TOOLS.get(step.tool)
            try:
                if handler is None or (
                    request.toolset is not None and step.tool not in request.toolset
                ):
                    raise _ToolError(f"No such tool available: {step.tool}")
                if request.read_only and step.tool != "Read":
                    # As Claude Code in plan mode: a read-only session writes nothing.
                    raise _ToolError(f"Cannot use {step.tool} in a read-only session")
                content, ok = handler(workdir, arguments), True
            except _ToolError as exc:
                content, ok = f"<tool_use_error>{exc}</tool_use_error>", False
        observer.on_entry(ToolResult(tool_use_id=call_id, ok=ok, content=content))
        if step.tool == STRUCTURED_OUTPUT_TOOL and request.output_schema is not None:
            if ok:
                await observer.on_stop()  # asked, as the CLI asks its Stop hook, and not obeyed
                raise _SessionOver(RunResult(subtype="success", num_turns=turns, duration_ms=0))
            if self._refused >= STRUCTURED_OUTPUT_ATTEMPTS:
                raise _SessionOver(
                    RunResult(
                        is_error=True,
                        subtype=STRUCTURED_OUTPUT_GAVE_UP,
                        num_turns=turns,
                        duration_ms=0,
                    )
                )
        return ok, content

    def _structured_output(
        self, arguments: dict[str, Any], schema: dict[str, Any]
    ) -> tuple[str, bool]:
        errors = sorted(
            jsonschema.validators.validator_for(schema)(schema).iter_errors(arguments),
            key=lambda e: list(map(str, e.path)),
        )
        if not errors:
            return "Structured output provided successfully", True
        self._refused += 1
        problems = ", ".join(e.message for e in errors)
        return f"Output does not match required schema: {problems}", False


def _target(workdir: Path, arguments: dict[str, Any]) -> Path:
    raw = arguments.get("file_path")
    if not isinstance(raw, str) or not raw:
        raise _ToolError("file_path is required")
    denied = f"Permission denied: {raw} is outside the working directory {workdir}"
    if relative_to_workdir(raw, str(workdir)) is None:
        raise _ToolError(denied)
    try:
        # Links are followed as the tool would follow them: one that leads out is denied too.
        resolve_inside(workdir, raw)
    except OSError as exc:
        raise _ToolError(f"Cannot resolve {raw}: {exc}") from None
    except OutsideFolderError as exc:
        raise _ToolError(f"{denied} (it leads to {exc.resolved})") from None
    return Path(raw)


def _read(workdir: Path, arguments: dict[str, Any]) -> str:
    lines = _load(_target(workdir, arguments)).splitlines()
    return "\n".join(f"{number:>6}\t{line}" for number, line in enumerate(lines, 1))


def _replace(text: str, old: object, new: object, replace_all: bool) -> str:
    if not isinstance(old, str) or not isinstance(new, str):
        raise _ToolError("old_string and new_string must be strings")
    if old == new:
        raise _ToolError("No changes to make: old_string and new_string are exactly the same.")
    count = text.count(old) if old else 0
    if count == 0:
        raise _ToolError(f"String to replace not found in file.\nString: {old}")
    if count > 1 and not replace_all:
        raise _ToolError(
            f"Found {count} matches of the string to replace, but replace_all is false. "
            "Provide more context to make it unique."
        )
    return text.replace(old, new) if replace_all else text.replace(old, new, 1)


def _load(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise _ToolError(f"File does not exist: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise _ToolError(f"Cannot read {path}: {exc}") from None


def _apply_edits(workdir: Path, arguments: dict[str, Any], edits: list[Any]) -> Path:
    """Apply ``edits`` (old_string/new_string/replace_all) to the file, all or nothing."""
    path = _target(workdir, arguments)
    text = _load(path)
    for edit in edits:  # the file is written only if every edit applies
        if not isinstance(edit, dict):
            raise _ToolError("each edit must be an object")
        text = _replace(
            text, edit.get("old_string"), edit.get("new_string"), edit.get("replace_all") is True
        )
    _save(path, text)
    return path


def _edit(workdir: Path, arguments: dict[str, Any]) -> str:
    path = _apply_edits(workdir, arguments, [arguments])
    return f"The file {path} has been updated."


def _multi_edit(workdir: Path, arguments: dict[str, Any]) -> str:
    edits = arguments.get("edits")
    if not isinstance(edits, list) or not edits:
        raise _ToolError("edits must be a non-empty list")
    path = _apply_edits(workdir, arguments, edits)
    return f"Applied {len(edits)} edits to {path}."


def _write(workdir: Path, arguments: dict[str, Any]) -> str:
    path = _target(workdir, arguments)
    content = arguments.get("content")
    if not isinstance(content, str):
        raise _ToolError("content must be a string")
    existed = path.exists()
    _save(path, content)
    return f"File {'updated' if existed else 'created'} successfully at: {path}"


def _save(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` (creating its directories); a failure is a tool error."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise _ToolError(f"Cannot write {path}: {exc.strerror or exc}") from None


_TOOLS: dict[str, Callable[[Path, dict[str, Any]], str]] = {
    "Read": _read,
    "Edit": _edit,
    "MultiEdit": _multi_edit,
    "Write": _write,
}
