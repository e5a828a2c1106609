"""Pipelines and loops in the user's own session: ``/phasegate:pipeline``, ``/phasegate:loop``,
their tool policy, their gate at every stop, their status, stop and records.

One pipeline logic: the stages move by
:class:`~phasegate.pipelines.progress.StageProgress` (checks, retries, hand-overs, ``back_to``
revisions, their events), each check by :class:`~phasegate.pipelines.visit.StageVisit` on the
disk (:class:`~phasegate.workspace.checks.DiskEvidence`,
:mod:`phasegate.validators.stage_checks`), the conversation by
:func:`phasegate.pipelines.machine.step`, refusals by
:func:`phasegate.pipelines.run.stage_refusal`, the recording by
:class:`~phasegate.pipelines.recorded.VisitLog`: what ``phasegate pipeline run`` uses. What this
module adds is carrying their state from one hook process to the next (:mod:`.carried`), as
:mod:`.gated` carries a task gate's counters, all in the session's ``state.json``; never the
project's ``pipeline-state.json`` (another session's run, or ``phasegate pipeline run``'s, may
be there).

A loop is the one-stage pipeline :func:`~phasegate.phases.loop.loop_pipeline` makes: its
prompt until its ``--until`` checks hold, one check per stop, within its iterations.

The block cap: every hand-over to the next stage is a Stop block, so a long pipeline meets
Claude Code's cap of 8 blocks in a row. Before a stop that would be the 8th block in a row the
gate checks nothing and ends the turn with one message (the stage the work is in, what to
type); the next user message starts a new turn, and its first stop checks that stage.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

from phasegate._plugin import carried
from phasegate._plugin.gated import BLOCKS_PER_TURN, TOKEN, VIA, _entries, _Refused
from phasegate._plugin.state import SessionFiles, project_dir, valid_session
from phasegate.errors import PhasegateError
from phasegate.evidence.transcript import (
    AssistantText,
    Entry,
    Notice,
    ToolCall,
    Transcript,
    Usage,
)
from phasegate.phases.checks import has_rubric
from phasegate.phases.pipeline import Pipeline, stage_checks
from phasegate.telemetry.events import EventData, RunEvent

AGENT = "claude-code-plugin"
"""The ``agent`` of the plugin's reports and events."""
DEFAULT_LOOP_ITERATIONS = 10
"""A loop's iterations when ``--max-iterations`` is not given (``phasegate loop``'s)."""


# -- commands -------------------------------------------------------------------------------

USAGE = {
    "pipeline": "/phasegate:pipeline FILE [ID=VALUE ...]",
    "loop": "/phasegate:loop PROMPT --until CHECK [--until CHECK ...] [--max-iterations N]",
    "status": "/phasegate:status",
    "stop": "/phasegate:stop",
}


def command_main(command: str, args: list[str]) -> str:
    """What ``command`` prints (``pipeline``, ``loop``; ``status``, ``stop`` of a pipeline or
    a loop), refusals worded as :func:`.gated.command_main` words them."""
    session = valid_session(os.environ.get("CLAUDE_CODE_SESSION_ID"))
    try:
        if session is None:
            raise _Refused(
                "this command runs inside a Claude Code session (CLAUDE_CODE_SESSION_ID is "
                "missing or malformed), so there is no session to gate"
            )
        files = SessionFiles(project_dir(), session)
        state = files.read()
        if command == "status" and state is not None:
            return status(files, state)
        if command == "stop" and state is not None:
            if state.get("status") != "running":
                return (
                    "phasegate: no gated work is running in this session. Tell the user "
                    "exactly this."
                )
            return stop(files, state)
        return start(command, files, args)
    except (_Refused, PhasegateError) as exc:
        return (
            f"phasegate: {exc}\nUsage: {USAGE[command]}\nNothing is gated. Tell the user "
            "exactly this message and do nothing else."
        )


def start(command: str, files: SessionFiles, args: list[str]) -> str:
    """``/phasegate:pipeline`` or ``/phasegate:loop``: the first stage's prompt, the run
    started; a :class:`_Refused` or :class:`PhasegateError` says what is wrong."""
    state = files.read()
    if state is not None and state.get("status") == "running":
        raise _Refused(
            f"this session already runs the gated {state.get('kind', 'task')} "
            f"{state['task']!r} (run {state['run_id']}); type /phasegate:stop to end it first"
        )
    definition = _pipeline_args(files, args) if command == "pipeline" else _loop_args(args)
    pipeline = _definition(files, definition)
    return _begin(files, command, pipeline, definition)


def _pipeline_args(files: SessionFiles, args: list[str]) -> dict[str, Any]:
    if not args or args[0].startswith("-"):
        raise _Refused("name the pipeline file to run (a phasegate pipeline or pagent's file)")
    from phasegate._plugin.gated import _inputs

    return {"file": str((files.project / args[0]).resolve()), "inputs": _inputs(args[1:])}


def _loop_args(args: list[str]) -> dict[str, Any]:
    """PROMPT words, ``--until CHECK`` (one or more: ``KIND: VALUE`` or a sentence such as
    ``'make test passes'``), ``--max-iterations N``."""
    from phasegate.phases.checks import check_as_file
    from phasegate.phases.sentences import checks_from_text

    words: list[str] = []
    until: list[dict[str, Any]] = []
    limit = DEFAULT_LOOP_ITERATIONS
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        option, equals, given = arg.partition("=")
        if option in ("--until", "--max-iterations"):
            if not equals:
                if not rest:
                    raise _Refused(f"{option} needs a value")
                given = rest.pop(0)
            if option == "--until":
                try:
                    until += [check_as_file(check) for check in checks_from_text(given)]
                except ValueError as exc:
                    raise _Refused(f"--until {exc}") from None
            else:
                try:
                    limit = int(given)
                except ValueError:
                    limit = 0
                if not 1 <= limit <= 1000:
                    raise _Refused(
                        f"--max-iterations {given!r}: give a whole number from 1 to 1000"
                    )
        elif arg.startswith("--"):
            raise _Refused(f"unknown option {arg!r}; a loop takes --until and --max-iterations")
        else:
            words.append(arg)
    prompt = " ".join(words).strip()
    if not prompt:
        raise _Refused("give the prompt the loop works on")
    if not until:
        raise _Refused(
            "a loop needs the evidence that ends it: --until CHECK, for example "
            "--until 'command: pytest -q' or --until 'said: DONE'"
        )
    return {"loop": {"prompt": prompt, "until": until, "max_iterations": limit}}


def _definition(files: SessionFiles, definition: dict[str, Any]) -> Pipeline:
    """The pipeline a state's definition names (loaded again in each hook process)."""
    if "loop" in definition:
        from pydantic import TypeAdapter

        from phasegate.phases.checks import Check
        from phasegate.phases.loop import loop_pipeline

        loop = definition["loop"]
        checks = [TypeAdapter(Check).validate_python(c) for c in loop["until"]]
        return loop_pipeline(loop["prompt"], checks, int(loop["max_iterations"]), name="loop")
    from phasegate.phases.filled import pipeline_with_values
    from phasegate.phases.pagent import load_pipeline_file
    from phasegate.pipelines.parallel import one_after_another

    file = Path(definition["file"])
    pipeline = load_pipeline_file(file, workdir=files.project)
    # One session cannot fork: stages with needs run in the graph's order, one at a time.
    return one_after_another(pipeline_with_values(pipeline, definition["inputs"]))


def _begin(files: SessionFiles, kind: str, pipeline: Pipeline, definition: dict[str, Any]) -> str:
    from phasegate.pipelines.run import checked_tools
    from phasegate.pipelines.state import PipelineState, stage_records
    from phasegate.telemetry.events import PipelineStarted, new_run_id

    run_id = new_run_id()
    pstate = PipelineState(
        pipeline=pipeline.name,
        digest=pipeline.digest(),
        run_id=run_id,
        isolation="session",
        stages=stage_records(pipeline),
    )
    state: dict[str, Any] = {
        "kind": kind,
        "status": "running",
        "run_id": run_id,
        "task": pipeline.name,
        **definition,
        "workdir": str(files.project),
        "started": time.time(),
        "blocks": 0,
        "last_issues": [],
        "seen_results": [],
        "visits": [],
        "checks": [],
        "refusals": 0,
    }
    state["pipeline_state"] = pstate.model_dump(mode="json")
    files.write(state)  # the session's folder exists before a hook appends to it
    loop = definition.get("loop")
    events: list[EventData] = [
        PipelineStarted(
            agent=AGENT, workdir=str(files.project), stages=len(pipeline.stages), stage=1,
            resumed=False,
            loop={"until": loop["until"], "max_iterations": loop["max_iterations"]}
            if loop else None,
        )
    ]  # fmt: skip
    progress = carried.progress(files, state, pipeline, events)
    first = progress.begin_stage(0, 0)
    carried.keep(state, progress)
    state["conversation"] = {"instruction": first, "checked_at": -1}
    files.write(state)
    guarded = checked_tools(pipeline)
    files.write(
        {"active": True, "guarded": guarded if guarded == "all" else list(guarded),
         "protect": any(stage.protect for stage in pipeline.stages)},
        "policy",
    )  # fmt: skip
    _emit(files, state, events)
    what = "loop" if kind == "loop" else f"pipeline {pipeline.name!r}"
    return (
        f"{first}\n\n({TOKEN}{run_id}: phasegate checks this {what} when you stop and hands "
        "over the next stage; the user can type /phasegate:status or /phasegate:stop.)"
    )


def status(files: SessionFiles, state: dict[str, Any]) -> str:
    """Where the pipeline or loop stands: stage, checks left, last issues, record."""
    pipeline_state = state["pipeline_state"]
    index = int(pipeline_state["stage"])
    record = pipeline_state["stages"][index]
    issues = "; ".join(f"{i['code']}: {i['message']}" for i in state.get("last_issues", []))
    if state["kind"] == "loop":
        limit = int(state["loop"]["max_iterations"])
        where = f"iteration {int(record['attempts']) + 1} of {limit}"
        left = limit - int(record["attempts"])
    else:
        where = f"stage {index + 1} of {len(pipeline_state['stages'])} ({record['name']})"
        left = _retry(files, state, index) + 1 - int(record["visit_attempts"])
    revisions = len(pipeline_state.get("revisions", []))
    return (
        f"phasegate: {state['kind']} {state['task']!r} (run {state['run_id']}) is "
        f"{state['status']}, at {where}; checks left in this stage: {max(left, 0)}; "
        f"revisions: {revisions}; last issues: {issues or 'none'}; record: "
        f"{files.recording(state['run_id'])} (phasegate view). Tell the user exactly this."
    )


def _retry(files: SessionFiles, state: dict[str, Any], index: int) -> int:
    try:
        return _definition(files, state).stages[index].on_fail.retry
    except (PhasegateError, OSError, IndexError):
        return 0


def stop(files: SessionFiles, state: dict[str, Any]) -> str:
    """``/phasegate:stop``: the run ends ``stopped`` (its report's error says so)."""
    pipeline = _definition(files, state)
    entries = _entries(files, state, {}, pending=False)
    pstate = carried.pipeline_state(state)
    pstate.status, pstate.error = "error", "stopped: /phasegate:stop ended the gated run"
    _finish(files, state, pipeline, pstate, entries, stopped=True)
    return (
        f"phasegate: the gated {state['kind']} {state['task']!r} is stopped; this session "
        f"goes on ungated. Record: {files.recording(state['run_id'])}. Tell the user exactly "
        "this."
    )


# -- PreToolUse -----------------------------------------------------------------------------


def refusal(files: SessionFiles, state: dict[str, Any], hook_input: dict[str, Any]) -> str | None:
    """Why the current stage refuses this call (``phasegate pipeline run``'s reason), or None;
    a refusal is kept in the session's evidence and logged as ``tool.refused``."""
    from phasegate.pipelines.run import stage_refusal
    from phasegate.telemetry.events import CallRefused

    pipeline = _definition(files, state)
    index = int(state["pipeline_state"]["stage"])
    arguments = hook_input.get("tool_input")
    call = ToolCall(
        id=str(hook_input.get("tool_use_id") or ""),
        name=str(hook_input.get("tool_name") or ""),
        input=arguments if isinstance(arguments, dict) else {},
    )
    reason = stage_refusal(pipeline, index, call, state["workdir"])
    if reason is None:
        return None
    from phasegate.tasks.report import RefusedCall

    pstate = carried.pipeline_state(state)
    pstate.current.refusals.append(
        RefusedCall(tool=call.name, tool_use_id=call.id, input=call.brief, reason=reason)
    )
    state["pipeline_state"] = pstate.model_dump(mode="json")
    state["refusals"] = int(state.get("refusals", 0)) + 1
    files.write(state)
    files.append({"kind": "refused", "id": call.id, "name": call.name, "reason": reason,
                  "phase": None, "input": call.brief, "stage": index})  # fmt: skip
    _emit(files, state, [CallRefused(stage=index + 1, tool=call.name, tool_use_id=call.id,
                                     input=call.brief, reason=reason)])  # fmt: skip
    return reason


# -- Stop -----------------------------------------------------------------------------------


def on_stop(
    files: SessionFiles,
    state: dict[str, Any],
    hook_input: dict[str, Any],
    started: float | None = None,
) -> dict[str, Any] | None:
    """Check the current stage; block with what the machine says the agent hears next, end
    the run, or end the turn before Claude Code's cap. ``started``: when the hook started
    (a :func:`time.time`), which bounds a rubric's grader."""
    from phasegate.pipelines import machine as m

    state["transcript_path"] = str(hook_input.get("transcript_path") or "")
    entries = _entries(files, state, hook_input, pending=True)
    said = [e for e in entries if isinstance(e, AssistantText | Notice)]
    if said and isinstance(said[-1], Notice):
        return None  # an API error ends this turn, not the model: nothing is checked
    in_a_row = int(state.get("blocks", 0)) if hook_input.get("stop_hook_active") else 0
    if in_a_row >= BLOCKS_PER_TURN:
        return _end_turn(files, state)
    pipeline = _definition(files, state)
    if pipeline.digest() != state["pipeline_state"]["digest"]:
        return {
            "systemMessage": f"phasegate: {state['task']!r} changed on disk since its run "
            "started, so this turn ends unchecked. Restore it, or type /phasegate:stop."
        }
    events: list[EventData] = []
    progress = carried.progress(files, state, pipeline, events, entries)
    carried.tools_called(state, progress, entries, events)
    if has_rubric(stage_checks(progress.stage)):
        from phasegate._plugin.checks import Bound
        from phasegate._plugin.grading import use_grader

        deadline = (started or time.time()) + Bound.stop().seconds
        use_grader(progress.disk, pipeline.grader, deadline=deadline)
    checked = asyncio.run(progress.check(entries, "stop"))
    carried.keep(state, progress)
    assert checked is not None  # the run is running: a check always says what follows
    conversation = m.Working(
        state["conversation"]["instruction"], int(state["conversation"]["checked_at"])
    )
    after, _ = m.step(conversation, checked)
    assert progress.visits is not None
    (last,) = progress.visits.recorder.checks  # this check, as the recording keeps it
    state["last_issues"] = [{"code": i.code, "message": i.message} for i in last.issues]
    _emit(files, state, events)
    if isinstance(after, m.Done):
        verdict = _finish(files, state, pipeline, progress.state, entries)
        return {
            "systemMessage": f"phasegate: {state['kind']} {state['task']!r} {verdict}. Its "
            f"page: phasegate view {files.recording(state['run_id'])}"
        }
    assert isinstance(after, m.Working)
    state["conversation"] = {"instruction": after.instruction, "checked_at": after.checked_at}
    state["blocks"] = in_a_row + 1
    files.write(state)
    return {"decision": "block", "reason": checked.text, "systemMessage": _progress_line(state)}


def _progress_line(state: dict[str, Any]) -> str:
    """What the user sees of a block (the terminal shows it only as a stop hook message)."""
    pipeline_state = state["pipeline_state"]
    index = int(pipeline_state["stage"])
    record = pipeline_state["stages"][index]
    codes = ", ".join(i["code"] for i in state["last_issues"])
    if state["kind"] == "loop":
        return f"phasegate: loop iteration {record['attempts']} not done yet ({codes}); it goes on."
    if record["visit_attempts"]:
        return (
            f"phasegate: stage {index + 1} ({record['name']}) not done yet ({codes}); the "
            "gate's feedback went back to Claude."
        )
    return (
        f"phasegate: on to stage {index + 1} of {len(pipeline_state['stages'])} ({record['name']})."
    )


def _end_turn(files: SessionFiles, state: dict[str, Any]) -> dict[str, Any]:
    pipeline_state = state["pipeline_state"]
    index = int(pipeline_state["stage"])
    name = pipeline_state["stages"][index]["name"]
    state["blocks"] = 0
    files.write(state)
    where = (
        "the loop is not done"
        if state["kind"] == "loop"
        else f"stage {index + 1} of {len(pipeline_state['stages'])} ({name}) is not checked yet"
    )
    return {
        "systemMessage": f"phasegate: {state['kind']} {state['task']!r}: {where}; after "
        f"{BLOCKS_PER_TURN} gate blocks in a row the turn ends here (Claude Code allows 8). "
        "Type 'go on' to continue from here (the next stop checks it), /phasegate:status to "
        "see where it stands, or /phasegate:stop to end it."
    }


def _finish(
    files: SessionFiles,
    state: dict[str, Any],
    pipeline: Pipeline,
    pstate: Any,
    entries: list[Entry],
    *,
    stopped: bool = False,
) -> str:
    """Close the run: usage per stage, its report, ``pipeline.completed``, its recording."""
    from phasegate.evidence.usage_split import split_usage
    from phasegate.pipelines.report import pipeline_report
    from phasegate.recording.model import IssueRecord, RecordingKind
    from phasegate.recording.recorder import Recorder
    from phasegate.telemetry.events import PipelineCompleted, grader_usage_field, usage_fields
    from phasegate.workspace.observer import WorkspaceObserver

    transcript = Transcript(entries=tuple(entries))
    starts = [(int(v["start"]), int(v["stage"])) for v in state["visits"]]

    def stage_of(position: int) -> int | None:
        owner = [stage for start, stage in starts if start <= position]
        return owner[-1] if owner else None

    split = split_usage(transcript, stage_of, len(pstate.stages))
    for record, usage in zip(pstate.stages, split.parts, strict=True):
        record.usage = usage
    # The stages' grader sessions are not in the session's transcript: added apart.
    grader = sum((record.grader_usage for record in pstate.stages), Usage())
    pstate.unattributed_usage, pstate.usage = split.unattributed, split.total + grader
    pstate.sessions = max(pstate.sessions, 1)
    duration = int((time.time() - float(state["started"])) * 1000)
    pstate.duration_ms = duration
    report = pipeline_report(
        pstate, agent=AGENT, state_file=files.state_path, final_message=transcript.final_message
    )
    folder = files.recording(state["run_id"])
    recorder = Recorder(folder)
    visits = carried.visit_log(state, recorder)
    for check in state["checks"]:
        recorder.check(**{**check, "issues": tuple(IssueRecord(**i) for i in check["issues"])})
    final = WorkspaceObserver(
        files.project, unobserved=[files.events_path], contents=recorder.contents
    ).snapshot()
    kind: RecordingKind = "loop" if state["kind"] == "loop" else "pipeline"
    recorder.finish(visits.record(kind, report, transcript, final))
    events: list[EventData] = [
        PipelineCompleted(
            verdict=report.verdict,
            stages_accepted=sum(1 for s in report.stages if s.status == "accepted"),
            revisions=len(report.revisions),
            sessions=report.sessions,
            duration_ms=duration,
            **usage_fields(pstate.usage),
            unattributed_usage=split.unattributed.model_dump(),
            grader_usage=grader_usage_field(grader),
            refusals=int(state.get("refusals", 0)),
            error=report.error,
            recording=str(folder),
            iterations=report.stages[0].attempts if kind == "loop" else None,
        )
    ]
    _emit(files, state, events)
    verdict = "stopped" if stopped else report.verdict
    state["status"] = verdict
    state["pipeline_state"] = pstate.model_dump(mode="json")
    state["report"] = report.model_dump(mode="json")
    files.write(state)
    files.write({"active": False}, "policy")
    return verdict


def _emit(files: SessionFiles, state: dict[str, Any], events: list[EventData]) -> None:
    """Append ``events`` to the project's event log as ``phasegate pipeline run`` logs
    them, each with ``via: plugin``."""
    from phasegate.telemetry.log import EventLog

    with EventLog(file=files.events_path, fields={"via": VIA}) as log:
        for data in events:
            log(RunEvent(data, state["run_id"], state["task"], "gate", isolation="session"))
