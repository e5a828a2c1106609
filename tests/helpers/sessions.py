"""Claude Code sessions with subagents, plan mode and every kind of line, written from the
public formats (session logs of Claude Code 1.x and 2.x, stream-json, ``--output-format
json``) for the tests of judging them. Nothing here is copied from a recorded session: each
builder writes the fields the readers look at, plus the bookkeeping a real log has around
them.

Each session is one run of :data:`TASK` (edit ``a.md``, then say so) in the work directory
``cwd``: the main agent reads, hands the edit to a subagent through the Agent (Task) tool,
and claims the phase once the subagent is done.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

TASK = """\
name: delegated-edit
completion: marker
phases:
  - name: edit
    instructions: Update a.md.
    marker: Files have been edited
    require_tools: [Edit]
    require_changes: true
"""
PLAN_TASK = """\
name: plan-only
completion: marker
read_only: true
phases:
  - name: plan
    instructions: Plan the change to a.md; change nothing.
    marker: Plan written
"""
MARKER = "PHASE 1 COMPLETE: Files have been edited"
SESSION = "5e55a1a0-0000-4000-8000-000000000042"
AGENT = "a3f9c21"
TASK_CALL = "toolu_task_01"


def _uuid(n: int) -> str:
    return str(uuid.UUID(int=n))


def use(call_id: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    """A tool_use content block."""
    return {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}


def result(call_id: str, text: str = "ok", *, error: bool = False) -> dict[str, Any]:
    """A tool_result content block."""
    return {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": error}


def text(words: str) -> dict[str, Any]:
    """A text content block."""
    return {"type": "text", "text": words}


class SessionLog:
    """A Claude Code session log being written, line by line, as ``version`` writes it."""

    def __init__(self, cwd: str, version: str, *, ids: str = "msg") -> None:
        self.cwd, self.version, self.ids = cwd, version, ids
        """``ids``: what its responses' ids start with (a subagent's differ from the main
        agent's, as the API's do)."""
        self.lines: list[dict[str, Any]] = []
        self._n = 0

    def _common(self, sidechain: bool, agent_id: str | None) -> dict[str, Any]:
        self._n += 1
        common = {
            "parentUuid": _uuid(self._n - 1) if self._n > 1 else None,
            "isSidechain": sidechain,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": SESSION,
            "version": self.version,
            "uuid": _uuid(self._n),
            "timestamp": f"2026-11-27T10:00:{self._n % 60:02d}.000Z",
        }
        if agent_id is not None:
            common["agentId"] = agent_id
        return common

    def message(
        self,
        role: str,
        content: str | list[dict[str, Any]],
        *,
        sidechain: bool = False,
        agent_id: str | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """A user or assistant line (a response has an id, a model and usage)."""
        body: dict[str, Any] = {"role": role, "content": content}
        if role == "assistant":
            body |= {
                "id": f"{self.ids}_{self._n:04d}",
                "model": "claude-sonnet-4-5",
                "type": "message",
                "usage": {"input_tokens": 10, "output_tokens": 5},
            }
        line = {**self._common(sidechain, agent_id), "type": role, "message": body, **extra}
        self.lines.append(line)
        return line

    def add(self, line: dict[str, Any]) -> None:
        """A bookkeeping line as it is."""
        self.lines.append(line)

    def progress(self, inner: dict[str, Any]) -> None:
        """A 2.x ``progress`` record carrying a subagent's message (``agent_progress``)."""
        self._n += 1
        self.lines.append(
            {
                "type": "progress",
                "parentToolUseID": TASK_CALL,
                "toolUseID": f"agent_msg_{self._n}",
                "sessionId": SESSION,
                "cwd": self.cwd,
                "uuid": _uuid(self._n),
                "data": {
                    "type": "agent_progress",
                    "agentId": AGENT,
                    "prompt": "Edit a.md",
                    "message": {"type": inner["type"], "message": inner["message"]},
                },
            }
        )

    def text(self) -> str:
        """The log as Claude Code keeps it: one JSON object a line."""
        return "".join(json.dumps(line) + "\n" for line in self.lines)


def bookkeeping(cwd: str) -> Iterator[dict[str, Any]]:
    """One of every bookkeeping line a session log holds, none of them evidence."""
    yield {"type": "summary", "summary": "Edit a.md", "leafUuid": _uuid(1)}
    yield {"type": "file-history-snapshot", "messageId": _uuid(2), "snapshot": {}}
    yield {"type": "file-history-delta", "messageId": _uuid(2), "files": {"a.md": {}}}
    yield {"type": "queue-operation", "operation": "enqueue", "sessionId": SESSION}
    # Older logs' hook notices: a system line with no subtype, only content and level.
    yield {
        "type": "system",
        "content": "PostToolUse:Edit [hook] completed successfully",
        "level": "info",
        "isMeta": False,
        "toolUseID": "toolu_main_read",
        "sessionId": SESSION,
        "cwd": cwd,
    }
    yield {"type": "system", "subtype": "stop_hook_summary", "sessionId": SESSION}
    yield {
        "type": "progress",
        "data": {"type": "hook_progress", "hookEvent": "PostToolUse"},
        "sessionId": SESSION,
    }


def session_v2(cwd: str, *, progress: bool = True) -> tuple[str, str]:
    """A 2.x session log and its subagent's file (``<session>/subagents/agent-<id>.jsonl``).

    The subagent's Edit is in both (as ``progress`` records, when ``progress``, and in its
    file); its last Read only in its file.
    """
    log = SessionLog(cwd, "2.0.76")
    sub = SessionLog(cwd, "2.0.76", ids="msg_sub")
    for line in bookkeeping(cwd):
        log.add(line)
    log.message("user", "Update a.md")
    log.message("assistant", [use("toolu_main_read", "Read", {"file_path": f"{cwd}/a.md"})])
    log.message("user", [result("toolu_main_read", "# A")])
    delegate = {"subagent_type": "general-purpose", "description": "edit", "prompt": "Edit a.md"}
    log.message("assistant", [use(TASK_CALL, "Task", delegate)])
    edit = {"file_path": f"{cwd}/a.md", "old_string": "old", "new_string": "new"}
    sub.message("user", "Edit a.md", sidechain=True, agent_id=AGENT)
    for role, content in (
        ("assistant", [use("toolu_sub_edit", "Edit", edit)]),
        ("user", [result("toolu_sub_edit", "The file a.md has been updated.")]),
        ("assistant", [use("toolu_sub_bad", "Edit", {**edit, "old_string": "gone"})]),
        ("user", [result("toolu_sub_bad", "String to replace not found", error=True)]),
    ):
        line = sub.message(role, content, sidechain=True, agent_id=AGENT)
        if progress:
            log.progress(line)
    sub.message("assistant", [use("toolu_sub_read", "Read", {"file_path": f"{cwd}/a.md"})],
                sidechain=True, agent_id=AGENT)  # fmt: skip
    sub.message("user", [result("toolu_sub_read", "# A new")], sidechain=True, agent_id=AGENT)
    sub.message("assistant", [text("Done: a.md edited.")], sidechain=True, agent_id=AGENT)
    log.message(
        "user",
        [result(TASK_CALL, "Done: a.md edited.")],
        toolUseResult={"status": "completed", "agentId": AGENT, "totalToolUseCount": 3},
    )
    log.message("assistant", [text(MARKER)])
    return log.text(), sub.text()


def session_v1(cwd: str) -> str:
    """A 1.x session log: the subagent's lines inline, marked ``isSidechain`` only."""
    log = SessionLog(cwd, "1.0.88")
    log.message("user", "Update a.md")
    delegate = {"subagent_type": "general-purpose", "description": "edit", "prompt": "Edit a.md"}
    log.message("assistant", [use(TASK_CALL, "Task", delegate)])
    log.message("user", "Edit a.md", sidechain=True)
    edit = {"file_path": f"{cwd}/a.md", "old_string": "old", "new_string": "new"}
    log.message("assistant", [use("toolu_sub_edit", "Edit", edit)], sidechain=True)
    log.message("user", [result("toolu_sub_edit", "updated")], sidechain=True)
    log.message("assistant", [text(MARKER)], sidechain=True)  # a subagent's claim: no claim
    log.message("user", [result(TASK_CALL, "Done")])
    log.message("assistant", [text(MARKER)])
    return log.text()


def stream_json(cwd: str) -> str:
    """``claude -p --output-format stream-json --verbose`` of the same run: the subagent's
    messages name their ``parent_tool_use_id``."""
    edit = {"file_path": f"{cwd}/a.md", "old_string": "old", "new_string": "new"}
    delegate = {"subagent_type": "general-purpose", "description": "edit", "prompt": "Edit a.md"}

    def assistant(content: list[dict[str, Any]], n: int, parent: str | None) -> dict[str, Any]:
        return {
            "type": "assistant",
            "parent_tool_use_id": parent,
            "session_id": SESSION,
            "message": {"id": f"msg_{n}", "model": "claude-sonnet-4-5", "content": content,
                        "usage": {"input_tokens": 10, "output_tokens": 5}},
        }  # fmt: skip

    def user(content: list[dict[str, Any]] | str, parent: str | None) -> dict[str, Any]:
        return {"type": "user", "parent_tool_use_id": parent, "session_id": SESSION,
                "message": {"role": "user", "content": content}}  # fmt: skip

    lines = [
        {
            "type": "system",
            "subtype": "init",
            "cwd": cwd,
            "session_id": SESSION,
            "tools": ["Task", "Edit", "Read"],
            "model": "claude-sonnet-4-5",
        },
        {
            "type": "system",
            "subtype": "hook_started",
            "hook_name": "SessionStart:startup",
            "session_id": SESSION,
        },
        assistant([use(TASK_CALL, "Task", delegate)], 1, None),
        user("Edit a.md", TASK_CALL),
        assistant([use("toolu_sub_edit", "Edit", edit)], 2, TASK_CALL),
        user([result("toolu_sub_edit", "updated")], TASK_CALL),
        assistant([text(MARKER)], 3, TASK_CALL),
        user([result(TASK_CALL, "Done")], None),
        assistant([text(MARKER)], 4, None),
        run_result(),
    ]
    return "".join(json.dumps(line) + "\n" for line in lines)


def run_result() -> dict[str, Any]:
    """A run's result, as ``claude -p --output-format json`` prints it alone."""
    return {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "duration_ms": 48210,
        "num_turns": 15,
        "result": "Done.",
        "session_id": SESSION,
        "total_cost_usd": 0.32,
        "usage": {"input_tokens": 1200, "output_tokens": 800},
    }


def plan_mode_session(cwd: str, home: str = "/home/dev") -> str:
    """A 2.x session in plan mode: the plan written to Claude Code's plans folder, a
    background command's output read back from the temporary folder, the plan handed in."""
    log = SessionLog(cwd, "2.0.76")
    plan = f"{home}/.claude/plans/quiet-fox.md"
    output = "/tmp/claude/-home-dev-proj/tasks/b4f2.output"
    log.message("user", "Plan the change to a.md", permissionMode="plan")
    for n, (name, tool_input) in enumerate(
        [
            ("Read", {"file_path": f"{cwd}/a.md"}),
            ("Read", {"file_path": output}),
            ("Write", {"file_path": plan, "content": "1. edit a.md"}),
            ("Edit", {"file_path": plan, "old_string": "1.", "new_string": "1)"}),
            ("ExitPlanMode", {"plan": "1) edit a.md"}),
        ]
    ):
        log.message("assistant", [use(f"toolu_plan_{n}", name, tool_input)])
        log.message("user", [result(f"toolu_plan_{n}")])
    log.message("assistant", [text("PHASE 1 COMPLETE: Plan written")])
    return log.text()


def write_session(folder: Path, log: str, subagents: dict[str, str]) -> Path:
    """``<folder>/<session>.jsonl`` and its subagents' files, as Claude Code lays them out."""
    path = folder / f"{SESSION}.jsonl"
    path.write_text(log)
    if subagents:
        (folder / SESSION / "subagents").mkdir(parents=True)
        for agent_id, body in subagents.items():
            (folder / SESSION / "subagents" / f"agent-{agent_id}.jsonl").write_text(body)
    return path
