"""A gated task in the user's own session: the commands that start, show, stop and judge it,
the tool policy PreToolUse asks about, and the gate the Stop hook runs.

Every decision comes from the code ``phasegate run`` uses: the phased prompt
(:func:`~phasegate.tasks.request.first_prompt`), the tool policy and protected paths
(:func:`~phasegate.validators.tool_policy.tool_refusal`,
:func:`~phasegate.validators.protect.write_refusal`, the refusal text of
:func:`~phasegate.prompts.refusals.refusal_reason`), the gate
(:class:`~phasegate.tasks.gate.PhaseGate`, its counters carried from one Stop hook process to
the next in the session's state) with the task's checks (run on the project within the time
Claude Code gives a hook or a command: :mod:`.checks`; what they wrote carried in the state,
as :class:`~phasegate.workspace.observer.WorkspaceObserver` hands it over), the report
(:func:`~phasegate.tasks.assembly.assemble_report`), its events and its recording. The
session's own text comes from Claude Code's session log (``transcript_path``, read as
``phasegate judge`` reads a saved transcript), from the user message that carries the run's
token onwards; the CLI's word on failed calls and the calls the policy refused come from the
session's evidence lines; changes on disk from a snapshot taken when the task started and one
at each stop, placed after the calls that made them (as a judged transcript places them).

The block cap: the CLI ends a turn after 8 Stop blocks in a row and a plugin cannot raise it.
The gate counts its blocks in a row (``stop_hook_active`` false starts a new count) and
stops blocking at :data:`BLOCKS_PER_TURN`, ending the turn with one message that says where
the work stands; the next user message goes on from the state.

One module past 500 lines on purpose: the commands, the tool policy and the Stop and
completion-tool checks all read and write the same session state and rebuild the same run
(task, entries, timeline, gate counters, what checks wrote) from it; split, each piece would
re-derive that run from the state on its own, which is the copy this module exists to avoid.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from phasegate._plugin.state import SessionFiles, project_dir, valid_session
from phasegate._plugin.tools import GATE_PREFIX, gate_name, subagent_fields
from phasegate.errors import PhasegateError
from phasegate.evidence.transcript import (
    AgentRef,
    AssistantText,
    Entry,
    Notice,
    ToolCall,
    ToolRefused,
    ToolResult,
    Transcript,
    UserText,
)
from phasegate.evidence.workspace import WorkspaceDiff, WorkspaceSnapshot, WorkspaceTimeline
from phasegate.modes import DEFAULT_MAX_ATTEMPTS
from phasegate.phases.filled import task_with_values
from phasegate.phases.loading import load_task
from phasegate.phases.model import Task
from phasegate.telemetry.events import EventData, RunEvent, new_run_id

if TYPE_CHECKING:
    from phasegate.prompts.completion_tools import ToolAnswer
    from phasegate.tasks.checks import TaskChecks
    from phasegate.tasks.gate import PhaseGate
    from phasegate.validators.check_runs import CheckRun
    from phasegate.workspace.checks import CheckDisk
    from phasegate.workspace.observer import WorkspaceObserver

BLOCKS_PER_TURN = 7
"""Stop blocks in a row the gate sends before it ends the turn itself (the CLI's cap is 8)."""

VIA = "plugin"
"""The ``via`` field of every event the plugin logs (``phasegate run`` logs none)."""

TOKEN = "phasegate run "
"""How the phased prompt names its run: the session's text counts from that user message."""

USAGE = {
    "run": "/phasegate:run TASK_FILE [ID=VALUE ...]",
    "judge": "/phasegate:judge TASK_FILE",
    "status": "/phasegate:status",
    "stop": "/phasegate:stop",
}


class _Refused(Exception):
    """A command that cannot go on: its message is the whole answer."""


# -- commands -------------------------------------------------------------------------------


def command_main(command: str, args: list[str]) -> str:
    """What ``command`` prints (its output is the model's next instruction)."""
    session = valid_session(os.environ.get("CLAUDE_CODE_SESSION_ID"))
    try:
        if session is None:
            raise _Refused(
                "this command runs inside a Claude Code session (CLAUDE_CODE_SESSION_ID is "
                "missing or malformed), so there is no session to gate"
            )
        files = SessionFiles(project_dir(), session)
        if command == "run":
            return _run(files, args)
        if command == "status":
            return _status(files)
        if command == "stop":
            return _stop(files)
        return _judge(files, args)
    except (_Refused, PhasegateError) as exc:
        return (
            f"phasegate: {exc}\nUsage: {USAGE[command]}\nNothing is gated. Tell the user "
            "exactly this message and do nothing else."
        )


def _run(files: SessionFiles, args: list[str]) -> str:
    if not args or args[0].startswith("-"):
        raise _Refused("name the task file to run")
    state = files.read()
    if state is not None and state.get("status") == "running":
        raise _Refused(
            f"this session already runs the gated task {state['task']!r} (run "
            f"{state['run_id']}); type /phasegate:stop to end it first"
        )
    task_file = (files.project / args[0]).resolve()
    inputs = _inputs(args[1:])
    definition = load_task(task_file)
    asked = _ask_missing(definition, inputs, args)
    if asked is not None:
        return asked
    task = _in_session(task_with_values(definition, inputs))
    run_id = new_run_id()
    from phasegate.prompts.templates import PromptTemplates
    from phasegate.tasks.progress import PhaseProgress
    from phasegate.tasks.request import first_prompt
    from phasegate.telemetry.events import RunStarted
    from phasegate.validators.tool_policy import guarded_tools

    prompt = first_prompt(task, "gate", PromptTemplates())
    guarded = guarded_tools(task)
    state = {
        "kind": "task",
        "status": "running",
        "run_id": run_id,
        "task": task.name,
        "task_file": str(task_file),
        "inputs": inputs,
        "workdir": str(files.project),
        "max_attempts": DEFAULT_MAX_ATTEMPTS,
        "started": time.time(),
        "start_snapshot": dict(_snapshot(files).files),
        "gate": {"attempts": 0},
        "blocks": 0,
        "checks": [],
        "check_runs": [],
        "by_checks": {},
        "last_issues": [],
    }
    files.write(state)
    offered = task.offered_tools
    files.write(
        {"active": True, "guarded": "all" if guarded is None else list(guarded),
         "protect": bool(task.protect),
         "offered": None if offered is None else list(offered)},
        "policy",
    )  # fmt: skip
    _emit(
        files,
        state,
        [
            RunStarted(
                agent="claude-code-plugin",
                workdir=str(files.project),
                phases=len(task.phases),
                max_attempts=DEFAULT_MAX_ATTEMPTS,
            ),
            PhaseProgress(task).started(),
        ],
    )
    return (
        f"{prompt}\n\n({TOKEN}{run_id}: phasegate checks each phase when you stop; "
        f"the user can type /phasegate:status or /phasegate:stop.){_bound_note(task)}"
    )


def _bound_note(task: Task) -> str:
    """For a task whose command checks may take longer than the plugin gives a stop's checks:
    a line saying so, for the user; else nothing."""
    if not has_checks(task):
        return ""
    from phasegate._plugin.checks import Bound, command_seconds

    most, bound = command_seconds(task), Bound.stop()
    if most <= bound.seconds:
        return ""
    return (
        f"\n(Tell the user: this task's command checks may take up to {most:g} s at a stop, "
        f"and {bound.why}; a check still running then is cut short and not taken as passed. "
        "`phasegate run` has no such bound.)"
    )


def _status(files: SessionFiles) -> str:
    state = files.read()
    if state is None:
        return "phasegate: no gated work in this session. Tell the user exactly this."
    issues = "; ".join(f"{i['code']}: {i['message']}" for i in state.get("last_issues", []))
    left = int(state["max_attempts"]) - int(state["gate"].get("attempts", 0))
    return (
        f"phasegate: task {state['task']!r} (run {state['run_id']}) is {state['status']}; "
        f"gate checks left: {max(left, 0)}; last issues: {issues or 'none'}; record: "
        f"{files.recording(state['run_id'])} (phasegate view). Tell the user exactly this."
    )


def _stop(files: SessionFiles) -> str:
    state = files.read()
    if state is None or state.get("status") != "running":
        return "phasegate: no gated work is running in this session. Tell the user exactly this."
    task = _task(Path(state["task_file"]), state["inputs"])
    _finish(files, state, task, None, stopped=True)
    return (
        f"phasegate: the gated task {state['task']!r} is stopped; this session goes on "
        f"ungated. Record: {files.recording(state['run_id'])}. Tell the user exactly this."
    )


def _judge(files: SessionFiles, args: list[str]) -> str:
    started = time.time()
    if len(args) != 1:
        raise _Refused("name one task file to judge this session against")
    task = _task((files.project / args[0]).resolve(), {})
    path = _transcript_path(files)
    if path is None:
        raise _Refused("this session's transcript was not found")
    from phasegate.prompts.feedback import FeedbackPrompt
    from phasegate.prompts.templates import PromptTemplates
    from phasegate.tasks.gate import PhaseGate
    from phasegate.tasks.transcript_file import read_transcript

    transcript, _ = read_transcript(path)
    state = files.read()
    if state is None:  # no gated task here: the disk as `phasegate judge` sees it (git)
        from phasegate.tasks.saved import judge_transcript

        def disk(observer: WorkspaceObserver) -> CheckDisk:
            from phasegate._plugin.checks import Bound, HookDisk

            return HookDisk(observer, started=started, bound=Bound.command())

        issues = list(
            judge_transcript(
                task, transcript, files.project, transcript_file=path, check_disk=disk
            ).issues
        )
    else:  # the task's own start snapshot
        observer = _observer(files, state)
        timeline = _timeline(
            files, transcript, WorkspaceSnapshot(state["start_snapshot"]), observer
        )
        checks = _checks(task, observer, started, command=True)
        gate = PhaseGate(task, workdir=str(files.project), checks=checks)
        issues = list(gate.judge(transcript, timeline).issues)
        _kept(files, state, observer)
        if gate.checks.ran:
            files.write(state)  # what the checks wrote is no work of the gated task's either
    if not issues:
        return f"phasegate: this session so far passes {task.name!r}. Tell the user exactly this."
    text = FeedbackPrompt.build(task, issues, attempts_left=0).render(PromptTemplates())
    return (
        f"phasegate: this session so far does not pass {task.name!r} (nothing is blocked):\n"
        f"{text}\nTell the user this verdict; do not start on the issues unless asked."
    )


def _inputs(pairs: list[str]) -> dict[str, str]:
    inputs: dict[str, str] = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not key:
            raise _Refused(f"{pair!r} is not ID=VALUE (an input of the task and its value)")
        inputs[key] = value
    return inputs


def _ask_missing(task: Task, inputs: dict[str, str], args: list[str]) -> str | None:
    """For a task missing required values: the instruction to ask the user for them with
    AskUserQuestion (the questions ``phasegate plan`` asks, at most 4 at a time) and to run
    the command again with the answers; None when nothing is missing."""
    from phasegate.planning.ask_user_question import to_ask_user_question
    from phasegate.planning.clarification import missing_inputs
    from phasegate.planning.questions import question_for

    known = {i.id: i.default for i in task.inputs if i.default is not None} | inputs
    missing = missing_inputs(task.inputs, known)[:4]
    if not missing:
        return None
    ask = to_ask_user_question([question_for(item) for item in missing])
    again = " ".join(["/phasegate:run", *args])
    return (
        f"phasegate: the task {task.name!r} needs values for "
        f"{', '.join(i.id for i in missing)}; nothing is gated yet. Ask the user now with "
        f"the AskUserQuestion tool, with exactly this input:\n{json.dumps(ask, indent=1)}\n"
        f"Then run `{again} ID=VALUE ...` with one ID=VALUE per answer (ID: "
        f"{', '.join(i.id for i in missing)}; VALUE: the label chosen, or the user's own "
        "text), and do nothing else until then."
    )


def _task(path: Path, inputs: dict[str, str]) -> Task:
    return _in_session(task_with_values(load_task(path), inputs))


def _in_session(task: Task) -> Task:
    """``task`` as the plugin runs it: an output phase's ``structured_output`` is dropped,
    since a session the user started has no ``StructuredOutput`` tool (it comes with
    ``--json-schema``, which only a session's start can set); its JSON is handed in as the
    completion mode allows (printed, or ``submit_summary``) and checked against the same
    schema."""
    output = task.output_phase
    if output is None or not output.structured_output:
        return task
    phases = tuple(
        p.model_copy(update={"structured_output": False}) if p is output else p for p in task.phases
    )
    return task.model_copy(update={"phases": phases})


# -- PreToolUse -----------------------------------------------------------------------------


def refusal(files: SessionFiles, hook_input: dict[str, Any]) -> str | None:
    """The reason a gated task refuses this call, as ``phasegate run`` words it, or None.
    A refusal is kept in the session's evidence and logged as ``call.refused``."""
    state = files.read()
    if state is None or state.get("status") != "running":
        return None
    from phasegate.prompts.refusals import refusal_reason
    from phasegate.telemetry.events import CallRefused
    from phasegate.validators.protect import write_refusal
    from phasegate.validators.tool_policy import current_phase, tool_refusal

    task = _task(Path(state["task_file"]), state["inputs"])
    name = gate_name(str(hook_input.get("tool_name") or ""))
    arguments = hook_input.get("tool_input")
    arguments = arguments if isinstance(arguments, dict) else {}
    entries = _entries(files, state, hook_input, pending=False)
    found = tool_refusal(task, entries, name)
    offered = task.offered_tools
    if offered is not None and name not in offered and not name.startswith(GATE_PREFIX):
        what = "a read_only task" if task.read_only else "this task (its toolset)"
        reason = (
            f"Refused: {name} is not offered to {what}, which offers only "
            f"{', '.join(offered)}. Nothing ran. Do the work with those tools."
        )
        phase = current_phase(task, entries)
    elif found is not None:
        reason, phase = refusal_reason(task, found), found.phase
    else:
        protected = write_refusal(name, arguments, task.protect, state["workdir"])
        if protected is None:
            return None
        reason, phase = f"Refused: {protected}", current_phase(task, entries)
    call = ToolCall(id=str(hook_input.get("tool_use_id") or ""), name=name, input=arguments)
    files.append({"kind": "refused", "id": call.id, "name": name, "reason": reason,
                  "phase": phase, "input": call.brief, **subagent_fields(hook_input)})  # fmt: skip
    _emit(files, state, [CallRefused(phase=phase, tool=name, tool_use_id=call.id,
                                     input=call.brief, reason=reason)])  # fmt: skip
    return reason


# -- Stop -----------------------------------------------------------------------------------


def on_stop(hook_input: dict[str, Any], *, started: float | None = None) -> dict[str, Any] | None:
    """The Stop hook: None lets the turn end silently (no gated work here); a block with the
    gate's feedback; or a message when the task ends or the turn ends before the cap.
    ``started``: when the hook started (:func:`time.time`; None: now), which bounds the
    time its checks may take (:mod:`.checks`)."""
    started = time.time() if started is None else started
    session = valid_session(hook_input.get("session_id"))
    if session is None:
        return None
    files = SessionFiles(project_dir(hook_input), session)
    state = files.read()
    if state is None or state.get("status") != "running":
        return None
    from phasegate.recording.model import issue_records
    from phasegate.tasks.progress import gate_checked
    from phasegate.tasks.recorded import check_part

    state["transcript_path"] = str(hook_input.get("transcript_path") or "")
    task = _task(Path(state["task_file"]), state["inputs"])
    transcript = Transcript(entries=tuple(_entries(files, state, hook_input, pending=True)))
    said = [e for e in transcript.entries if isinstance(e, AssistantText | Notice)]
    if said and isinstance(said[-1], Notice):
        # The turn ends because the API failed (Claude Code's own "API Error" message), not
        # because the model is done: no check is counted, and Claude Code shows the error.
        return None
    observer = _observer(files, state)
    start = WorkspaceSnapshot(state["start_snapshot"])
    timeline = _timeline(files, transcript, start, observer)
    gate = _gate(task, state, _checks(task, observer, started))
    decision = gate.check(transcript, timeline)
    judgment = decision.judgment
    ran = _counted(files, state, gate, observer)
    state["last_issues"] = [i.as_dict() for i in issue_records(judgment.issues)]
    state["checks"].append(
        {"part": check_part(task, judgment), "attempt": decision.attempt, "trigger": "stop",
         "accepted": judgment.accepted, "issues": state["last_issues"],
         "feedback": decision.feedback, "entry": len(transcript)}
    )  # fmt: skip
    _emit(files, state, [*ran, *gate_checked(judgment, decision.attempt, "stop")])
    if decision.feedback is None:
        report = _finish(files, state, task, (gate, transcript, timeline))
        page = files.recording(state["run_id"])
        issues = ", ".join(sorted({i["code"] for i in state["last_issues"]}))
        return {
            "systemMessage": f"phasegate: task {task.name!r} {report}"
            + (f" ({issues})" if issues else "")
            + f". Its page: phasegate view {page}"
        }
    blocks = int(state.get("blocks", 0)) + 1 if hook_input.get("stop_hook_active") else 1
    if blocks > BLOCKS_PER_TURN:
        state["blocks"] = 0
        files.write(state)
        return {
            "systemMessage": f"phasegate: task {task.name!r} is not done after {BLOCKS_PER_TURN} "
            "gate checks in a row in this turn, so the turn ends here (Claude Code allows 8). "
            f"Last issues: {', '.join(i['code'] for i in state['last_issues'])}. Type "
            "'go on' to continue from here, /phasegate:status to see where it stands, or "
            "/phasegate:stop to end it."
        }
    state["blocks"] = blocks
    files.write(state)
    codes = ", ".join(dict.fromkeys(i["code"] for i in state["last_issues"]))
    left = int(state["max_attempts"]) - decision.attempt
    return {
        "decision": "block",
        "reason": decision.feedback,
        # What the user sees: the terminal shows a block only as "stop hook problem".
        "systemMessage": f"phasegate: {task.name!r} not accepted yet ({codes}); the gate's "
        f"feedback went back to Claude ({left} check(s) left).",
    }


def answer_completion_tool(
    session_id: str | None, name: str, arguments: dict[str, Any], use_id: str | None
) -> ToolAnswer:
    """The plugin's MCP server's answer to a completion tool call (``name`` as the gate knows
    it) in session ``session_id``: the gate's, as ``phasegate run`` answers it, once the call
    is found in that session's log (see :mod:`.mcp`)."""
    started = time.time()
    from phasegate.phases.completion import TOOL_SERVER, counts_tools
    from phasegate.prompts.completion_tools import error_answer
    from phasegate.recording.model import issue_records
    from phasegate.tasks.progress import gate_checked
    from phasegate.tasks.recorded import check_part

    short = name.removeprefix(f"mcp__{TOOL_SERVER}__")
    attempted = {"tool": short, **arguments}
    session = valid_session(session_id)
    files = SessionFiles(project_dir(), session) if session is not None else None
    state = files.read() if files is not None else None
    if files is None or state is None or state.get("status") != "running":
        return error_answer(
            attempted,
            "no phasegate task is running in this session",
            "Do not call phasegate's tools now; /phasegate:run starts a gated task.",
        )
    task = _task(Path(state["task_file"]), state["inputs"])
    if not counts_tools(task.completion):
        return error_answer(
            attempted,
            "this task completes phases by marker lines, not by this tool",
            "Print the PHASE N COMPLETE line the task's prompt gives instead.",
        )
    entries = _logged_call(files, state, use_id)
    if use_id is None or not any(isinstance(e, ToolCall) and e.id == use_id for e in entries):
        return error_answer(
            attempted,
            "this call is not in this session's log since its gated task began",
            "Go on with the task; the gate checks your work when you stop.",
        )
    transcript = Transcript(entries=tuple(entries))
    observer = _observer(files, state)
    start = WorkspaceSnapshot(state["start_snapshot"])
    timeline = _timeline(files, transcript, start, observer)
    gate = _gate(task, state, _checks(task, observer, started))
    check = gate.answer_tool(short, arguments, transcript, timeline)
    ran = _counted(files, state, gate, observer)
    judgment = check.judgment
    if judgment is not None:
        called = gate.called_phase(short, arguments)
        state["last_issues"] = [i.as_dict() for i in issue_records(judgment.issues)]
        state["checks"].append(
            {"part": called - 1 if isinstance(called, int) else check_part(task, judgment),
             "attempt": gate.attempts, "trigger": "tool", "accepted": check.answer.ok,
             "issues": state["last_issues"], "feedback": check.answer.text,
             "entry": len(transcript)}
        )  # fmt: skip
        _emit(files, state, [*ran, *gate_checked(judgment, gate.attempts, "tool", short)])
    files.write(state)
    return check.answer


LOG_WAIT_SECONDS = 5.0
"""How long a completion tool's answer waits for the call to reach the session log: Claude
Code writes its log lines a moment after it sends the call to the MCP server (2.1.332: the
call after a tool result was seen missing from the log when asked, there a few ms later)."""


def _logged_call(files: SessionFiles, state: dict[str, Any], use_id: str | None) -> list[Entry]:
    """The session's entries once they hold the call ``use_id`` (read again until they do,
    for at most :data:`LOG_WAIT_SECONDS`); as they are then, whether they hold it or not."""
    import time

    deadline = time.monotonic() + LOG_WAIT_SECONDS
    while True:
        entries = _entries(files, state, {}, pending=False)
        found = any(isinstance(e, ToolCall) and e.id == use_id for e in entries)
        if use_id is None or found or time.monotonic() >= deadline:
            return entries
        time.sleep(0.05)


def _finish(
    files: SessionFiles,
    state: dict[str, Any],
    task: Task,
    checked: Any,
    *,
    stopped: bool = False,
) -> str:
    """Close the run: its report, closing events and recording; the verdict."""
    from phasegate.recording.model import IssueRecord
    from phasegate.recording.recorder import Recorder
    from phasegate.tasks.assembly import RunFacts, assemble_report
    from phasegate.tasks.progress import closing_events
    from phasegate.tasks.recorded import task_record

    if checked is None:  # stopped: judge what there is, without counting a check or
        # running one (a check not run on the disk as it is shows as not run)
        gate = _gate(task, state, None)
        transcript = Transcript(entries=tuple(_entries(files, state, {}, pending=False)))
        observer = _observer(files, state)
        start = WorkspaceSnapshot(state["start_snapshot"])
        timeline = _timeline(files, transcript, start, observer)
        _kept(files, state, observer)
        judgment = gate.judge(transcript, timeline, run_checks=False)
        state["gate"] = _counts(gate)
    else:
        gate, transcript, timeline = checked
        judgment = gate.last.judgment
    runs: tuple[CheckRun, ...] = ()
    if state.get("check_runs"):
        from phasegate._plugin.checks import carried_runs

        runs = carried_runs(state["check_runs"])
    error = "stopped: /phasegate:stop ended the gated task" if stopped else None
    report = assemble_report(
        judgment,
        RunFacts(
            run_id=state["run_id"],
            task=task.name,
            mode="gate",
            agent="claude-code-plugin",
            transcript=transcript,
            times=(),
            attempts=gate.attempts,
            phase_attempts=gate.phase_attempts,
            duration_ms=int((time.time() - float(state["started"])) * 1000),
            retries=0,
            api_retries=0,
            error=error,
            check_runs=runs,
        ),
    )
    folder = files.recording(state["run_id"])
    recorder = Recorder(folder)
    for check in state["checks"]:
        recorder.check(
            part=check["part"],
            attempt=check["attempt"],
            trigger=check["trigger"],
            accepted=check["accepted"],
            issues=tuple(IssueRecord(**i) for i in check["issues"]),
            feedback=check["feedback"],
            entry=check["entry"],
        )
    recorder.write(task_record("task", task, report, transcript, timeline))
    _emit(files, state, list(closing_events(report, error, str(folder))))
    verdict = "stopped" if stopped else report.verdict
    state["status"] = verdict
    state["report"] = report.model_dump(mode="json")
    files.write(state)
    files.write({"active": False}, "policy")
    return verdict


# -- the session's evidence -----------------------------------------------------------------


def _transcript_path(files: SessionFiles) -> Path | None:
    state = files.read() or {}
    named = state.get("transcript_path")
    if named:
        return Path(named)
    home = os.environ.get("CLAUDE_CONFIG_DIR") or str(Path.home() / ".claude")
    found = sorted(Path(home).glob(f"projects/*/{files.session_id}.jsonl"))
    return found[0] if found else None


def _entries(
    files: SessionFiles, state: dict[str, Any], hook_input: dict[str, Any], *, pending: bool
) -> list[Entry]:
    """The session's entries since the run's prompt, with the CLI's failures and the
    policy's refusals from the evidence lines; ``pending``: the hook's
    ``last_assistant_message`` is added when the log has not caught up with it yet."""
    from phasegate.tasks.transcript_file import read_transcript

    named = hook_input.get("transcript_path") or state.get("transcript_path")
    path = Path(str(named)) if named else _transcript_path(files)
    entries: list[Entry] = []
    if path is not None and path.is_file():
        transcript, _ = read_transcript(path)
        entries = list(transcript.entries)
    token = f"{TOKEN}{state['run_id']}"
    starts = [i for i, e in enumerate(entries) if isinstance(e, UserText) and token in e.text]
    entries = entries[starts[-1] :] if starts else []
    last = hook_input.get("last_assistant_message")
    if pending and isinstance(last, str) and last.strip():
        texts = [e for e in entries if isinstance(e, AssistantText | Notice)]
        if not texts or not last.strip().endswith(texts[-1].text.strip()):
            entries.append(AssistantText(text=last))
    evidence = files.evidence()
    failed = {e["id"] for e in evidence if e.get("kind") == "result" and not e.get("ok")}
    refused = {e["id"]: e for e in evidence if e.get("kind") == "refused"}
    # The hooks' word on who made a call, for a call the session log does not place in a
    # subagent (its subagent file not written yet, or a log shape that does not say).
    agents = {e["id"]: agent for e in evidence if (agent := AgentRef.from_hook(e)) is not None}
    out: list[Entry] = []
    for entry in entries:
        if isinstance(entry, ToolCall) and entry.name != gate_name(entry.name):
            entry = entry.model_copy(update={"name": gate_name(entry.name)})
        if isinstance(entry, ToolResult) and entry.tool_use_id in failed:
            entry = entry.model_copy(update={"ok": False})
        if isinstance(entry, ToolCall | ToolResult) and entry.agent is None:
            agent = agents.get(entry.id if isinstance(entry, ToolCall) else entry.tool_use_id)
            if agent is not None:
                entry = entry.model_copy(update={"agent": agent})
        out.append(entry)
        if isinstance(entry, ToolCall) and entry.id in refused:
            r = refused[entry.id]
            out.append(ToolRefused(tool_use_id=entry.id, name=entry.name, input=r["input"],
                                   reason=r["reason"], phase=r["phase"]))  # fmt: skip
    return out


def has_checks(task: Task) -> bool:
    """Whether ``task`` has a check anywhere (a phase's, or its own)."""
    return bool(task.checks) or any(phase.checks for phase in task.phases)


def _checks(
    task: Task, observer: WorkspaceObserver, started: float, *, command: bool = False
) -> TaskChecks | None:
    """The task's checks, run on the project by ``observer`` within the time Claude Code
    gives a stop (``command``: a command) that began at ``started``; None for a task without
    checks, which loads none of their machinery."""
    if not has_checks(task):
        return None
    from phasegate._plugin.checks import Bound, task_checks

    bound = Bound.command() if command else Bound.stop()
    return task_checks(task, observer, started=started, bound=bound)


def _gate(task: Task, state: dict[str, Any], checks: TaskChecks | None) -> PhaseGate:
    """The task's gate as the session's last process left it (its counters, the judgments
    its checks' runs are numbered by), with ``checks`` (None: none run)."""
    from phasegate.tasks.gate import PhaseGate

    gate = PhaseGate(
        task, workdir=state["workdir"], max_attempts=int(state["max_attempts"]), checks=checks
    )
    gate.restore(state["gate"])
    gate.judgments = int(state["gate"].get("judgments", 0))
    return gate


def _counts(gate: PhaseGate) -> dict[str, Any]:
    """What :func:`_gate` takes up in the next process."""
    return {**gate.counts(), "judgments": gate.judgments}


def _counted(
    files: SessionFiles, state: dict[str, Any], gate: PhaseGate, observer: WorkspaceObserver
) -> list[EventData]:
    """After a counted judgment: its counters, its check runs and what the checks wrote kept
    in ``state`` (written by the caller); a ``check.ran`` event for each run."""
    state["gate"] = _counts(gate)
    _kept(files, state, observer)
    if not gate.checks.ran:
        return []
    from phasegate._plugin.checks import run_records
    from phasegate.telemetry.events import CheckRan

    state["check_runs"] = [*state.get("check_runs", []), *run_records(gate.checks.ran)]
    return [CheckRan.of(run) for run in gate.checks.ran]


def _observer(files: SessionFiles, state: dict[str, Any] | None = None) -> WorkspaceObserver:
    """The project's observer in this process, taking up what the session's last one knew:
    the hashes of files unchanged since (``hashes.json``) and what the task's checks wrote
    (the state's ``by_checks``: never the agent's work, in this process or a later one)."""
    from phasegate.workspace.observer import WorkspaceObserver

    return WorkspaceObserver(
        files.project,
        unobserved=[files.events_path],
        hashes=files.read("hashes"),
        by_checks=(state or {}).get("by_checks"),
    )


def _kept(files: SessionFiles, state: dict[str, Any] | None, observer: WorkspaceObserver) -> None:
    """Hand what ``observer`` learnt to the session's next process: the hashes (a cache: one
    that cannot be written is no failure) and what checks wrote, into ``state`` (which the
    caller writes: losing it would make a check's output the agent's work)."""
    with contextlib.suppress(OSError, PhasegateError):
        files.write(observer.hashes(), "hashes")
    if state is not None:
        state["by_checks"] = observer.by_checks()


def _snapshot(files: SessionFiles) -> WorkspaceSnapshot:
    """The work directory now; the files unchanged since the session's last snapshot are not
    read again."""
    observer = _observer(files)
    snapshot = observer.snapshot()
    _kept(files, None, observer)
    return snapshot


def _timeline(
    files: SessionFiles,
    transcript: Transcript,
    start: WorkspaceSnapshot,
    observer: WorkspaceObserver,
) -> WorkspaceTimeline:
    """The disk's changes since the task started, placed after the calls that made them."""
    from phasegate.tasks.transcript_file import changes_timeline

    diff = WorkspaceDiff.between(start, observer.snapshot())
    return changes_timeline(transcript, diff, str(files.project))


def _emit(files: SessionFiles, state: dict[str, Any], events: list[EventData]) -> None:
    """Append ``events`` to the project's event log, each with ``via: plugin``."""
    from phasegate.telemetry.log import EventLog

    with EventLog(file=files.events_path, fields={"via": VIA}) as log:
        for data in events:
            log(RunEvent(data, state["run_id"], state["task"], "gate"))
