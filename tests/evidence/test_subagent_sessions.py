"""Subagent work, read from every shape Claude Code keeps it in, named and counted once.

The sessions are written from the public formats by tests/helpers/sessions.py: a 2.x log with
``progress`` records and a subagent file beside it, a 1.x log with inline sidechain lines,
stream-json naming ``parent_tool_use_id``. The property test builds any mix of main-agent and
subagent calls in any of those shapes and counts them independently of the reader.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.helpers.sessions import (
    AGENT,
    TASK_CALL,
    SessionLog,
    bookkeeping,
    result,
    session_v1,
    session_v2,
    stream_json,
    use,
)

from phasegate.evidence.saved_transcript import read_transcript_text
from phasegate.evidence.transcript import AgentRef, Notice, ToolCall, ToolResult, Transcript
from phasegate.validators.subagents import main_agent_calls, subagent_work
from phasegate.validators.tools import tool_calls

CWD = "/home/dev/proj"


def calls_by_agent(transcript: Transcript) -> dict[str | None, list[str]]:
    """The ids of the calls each agent made (None: the main agent)."""
    found: dict[str | None, list[str]] = {}
    for entry in transcript.entries:
        if isinstance(entry, ToolCall):
            found.setdefault(entry.agent.id if entry.agent else None, []).append(entry.id)
    return found


def test_a_v2_subagent_in_progress_records_and_its_own_file_is_read_once() -> None:
    """The Edit kept in both is one call; the Read only its file has is read too; both
    are the subagent's, named by its agentId and the type its Task call asked for."""
    log, sub = session_v2(CWD)

    parsed = read_transcript_text(log, subagents=[sub])

    assert calls_by_agent(parsed.transcript) == {
        None: ["toolu_main_read", TASK_CALL],
        AGENT: ["toolu_sub_edit", "toolu_sub_bad", "toolu_sub_read"],
    }
    call = next(e for e in parsed.transcript.entries if isinstance(e, ToolCall) and e.agent)
    assert call.agent == AgentRef(id=AGENT, type="general-purpose", parent=TASK_CALL)
    assert parsed.stats.subagent_files == 1
    # Its responses too: the main agent's 3 and the subagent's 4, those kept twice once.
    assert len(parsed.transcript.responses()) == 3 + 4


def test_a_subagent_file_is_put_where_its_agent_ran() -> None:
    """Without progress records, the file's entries come before the Task call's result
    (so the phase that started the subagent holds its work), not at the end."""
    log, sub = session_v2(CWD, progress=False)

    entries = read_transcript_text(log, subagents=[sub]).transcript.entries

    positions = {
        (type(e).__name__, getattr(e, "id", None) or getattr(e, "tool_use_id", None)): i
        for i, e in enumerate(entries)
    }
    assert positions[("ToolCall", "toolu_sub_edit")] < positions[("ToolResult", TASK_CALL)]


def test_every_bookkeeping_line_of_a_session_log_is_skipped_silently() -> None:
    """Hook notices without a subtype, file-history-delta, summaries, snapshots, hook
    progress: ignored, none counted as foreign."""
    log = SessionLog(CWD, "2.0.76")
    for line in bookkeeping(CWD):
        log.add(line)
    log.message("user", "hi")

    stats = read_transcript_text(log.text()).stats

    assert (stats.unrecognised, stats.not_json) == (0, 0)
    assert stats.ignored == len(list(bookkeeping(CWD)))


def test_a_v1_sidechain_is_named_by_the_task_call_that_started_it() -> None:
    """A 1.x sidechain line names no agent: the one Task call running is its parent, and
    its text is no claim of the main agent."""
    transcript = read_transcript_text(session_v1(CWD)).transcript

    assert calls_by_agent(transcript) == {None: [TASK_CALL], TASK_CALL: ["toolu_sub_edit"]}
    assert Notice(text="PHASE 1 COMPLETE: Files have been edited") in transcript.entries


def test_stream_json_subagent_calls_name_their_parent_tool_use() -> None:
    """``parent_tool_use_id`` names the subagent, the Task call's input its type."""
    transcript = read_transcript_text(stream_json(CWD)).transcript

    results = [e for e in transcript.entries if isinstance(e, ToolResult) and e.agent]
    assert [r.agent for r in results] == [
        AgentRef(id=TASK_CALL, type="general-purpose", parent=TASK_CALL)
    ]


def test_a_hook_inside_a_subagent_names_the_same_agent() -> None:
    """A hook's ``agent_id`` and ``agent_type`` make the same AgentRef a session log's
    ``agentId`` does; a hook of the main agent names none."""
    hook = {"hook_event_name": "PostToolUse", "agent_id": AGENT, "agent_type": "Explore"}

    assert AgentRef.from_hook(hook) == AgentRef(id=AGENT, type="Explore")
    assert AgentRef.from_hook({"hook_event_name": "PostToolUse"}) is None


# -- any mix: main calls plus subagent calls are the calls in the file --------------------

SHAPES = ("stream-json", "v1", "v2-progress", "v2-files", "v2-both")
CALL = st.tuples(st.sampled_from(["Read", "Edit", "Bash", "Grep"]), st.booleans())


def _build(shape: str, main: list[Any], agents: list[list[Any]]) -> tuple[str, list[str]]:
    """The session in ``shape``, and the subagent files beside it."""
    log, files, lines = SessionLog(CWD, "1.0.88" if shape == "v1" else "2.0.76"), [], []
    n = 0

    def line(role: str, content: Any, agent: int | None, parent: str | None) -> None:
        if shape == "stream-json":
            lines.append({"type": role, "parent_tool_use_id": parent, "session_id": "s",
                          "message": {"role": role, "content": content}})  # fmt: skip
        elif agent is None:
            log.message(role, content)
        elif shape == "v1":
            log.message(role, content, sidechain=True)
        else:
            inner = sub_logs[agent].message(role, content, sidechain=True, agent_id=f"ag{agent}")
            if shape in ("v2-progress", "v2-both"):
                message = {"type": role, "message": inner["message"]}
                data = {"type": "agent_progress", "agentId": f"ag{agent}", "message": message}
                log.add({"type": "progress", "parentToolUseID": parent, "data": data})

    sub_logs = [SessionLog(CWD, "2.0.76") for _ in agents]
    for name, ok in main:
        n += 1
        line("assistant", [use(f"m{n}", name, {})], None, None)
        line("user", [result(f"m{n}", error=not ok)], None, None)
    for k, calls in enumerate(agents):
        task = f"task{k}"
        line("assistant", [use(task, "Task", {"subagent_type": f"type{k}"})], None, None)
        for name, ok in calls:
            n += 1
            line("assistant", [use(f"s{n}", name, {})], k, task)
            line("user", [result(f"s{n}", error=not ok)], k, task)
        if shape == "stream-json":
            line("user", [result(task)], None, None)
        else:
            log.message("user", [result(task)], toolUseResult={"agentId": f"ag{k}"})
        if shape in ("v2-files", "v2-both"):
            files.append(sub_logs[k].text())
    if shape == "stream-json":
        return "".join(json.dumps(x) + "\n" for x in lines), []
    return log.text(), files


@settings(max_examples=60, deadline=None)
@given(
    shape=st.sampled_from(SHAPES),
    main=st.lists(CALL, max_size=4),
    agents=st.lists(st.lists(CALL, min_size=1, max_size=4), max_size=3),
)
def test_main_agent_calls_plus_every_subagents_are_the_calls_in_the_file(
    shape: str, main: list[Any], agents: list[list[Any]]
) -> None:
    """Whatever the shape and the mix, each call counts once: the main agent's (its own
    plus one Task call per subagent) and each subagent's add up to every call made."""
    text, files = _build(shape, main, agents)

    calls = tool_calls(read_transcript_text(text, subagents=files).transcript)
    work = subagent_work(calls, CWD)

    made = len(main) + len(agents) + sum(len(c) for c in agents)
    main_ok = main_agent_calls(
        {
            n: sum(1 for r in calls if r.ok and r.call.name == n)
            for n in {r.call.name for r in calls}
        },
        work,
    )
    main_errors = sum(1 for r in calls if not r.ok) - sum(w.tool_errors for w in work)
    assert sum(main_ok.values()) + main_errors + sum(w.calls for w in work) == made
    assert sum(main_ok.values()) + main_errors == len(main) + len(agents)
    assert sorted(w.calls for w in work) == sorted(len(c) for c in agents)
    assert main_errors == sum(1 for _, ok in main if not ok)


def test_a_progress_record_whose_message_names_only_its_role_is_read() -> None:
    """Some 2.x records leave ``type`` out of ``data.message`` and name the subagent's
    kind in ``data.agentType``: the role says which message it is."""
    record = {
        "type": "progress",
        "parentToolUseID": TASK_CALL,
        "sessionId": "s",
        "data": {
            "type": "agent_progress",
            "agentId": AGENT,
            "agentType": "Explore",
            "message": {"message": {"role": "assistant", "content": [use("toolu_x", "Grep", {})]}},
        },
    }

    parsed = read_transcript_text(json.dumps(record) + "\n")

    (call,) = [e for e in parsed.transcript.entries if isinstance(e, ToolCall)]
    assert call.agent == AgentRef(id=AGENT, type="Explore", parent=TASK_CALL)
    assert parsed.stats.understood == 1


def test_a_failed_subagents_file_is_placed_by_its_progress_records() -> None:
    """When the Agent (Task) call fails, its result names no ``agentId``; the progress
    records name the call, so the calls only the subagent's file has still come before
    that result (in the phase that started it), not after the run's last phase."""
    log, sub = SessionLog(CWD, "2.0.76"), SessionLog(CWD, "2.0.76")
    log.message("assistant", [use(TASK_CALL, "Task", {"subagent_type": "editor"})])
    sub.message("user", "Edit a.md", sidechain=True, agent_id=AGENT)
    for role, content in (
        ("assistant", [use("toolu_sub_edit", "Edit", {"file_path": f"{CWD}/a.md"})]),
        ("user", [result("toolu_sub_edit", "updated")]),
    ):
        log.progress(sub.message(role, content, sidechain=True, agent_id=AGENT))
    sub.message("assistant", [use("toolu_sub_read", "Read", {})], sidechain=True, agent_id=AGENT)
    sub.message("user", [result("toolu_sub_read", "gone", error=True)], sidechain=True,
                agent_id=AGENT)  # fmt: skip
    log.message("user", [result(TASK_CALL, "interrupted", error=True)], toolUseResult="Error")
    log.message("assistant", [use("toolu_main_grep", "Grep", {})])

    entries = read_transcript_text(log.text(), subagents=[sub.text()]).transcript.entries

    order = [e.id for e in entries if isinstance(e, ToolCall)]
    assert order == [TASK_CALL, "toolu_sub_edit", "toolu_sub_read", "toolu_main_grep"]
    (read,) = [e for e in entries if isinstance(e, ToolCall) and e.id == "toolu_sub_read"]
    assert read.agent == AgentRef(id=AGENT, type="editor", parent=TASK_CALL)
