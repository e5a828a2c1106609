"""Scripted models that try to leave Claude Code's sandbox, and the checks every confined run's
record must pass: each attempt one ``blocked`` entry right after the result or refusal that
shows it, one ``sandbox.blocked`` event, and the report's list made of the same attempts."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import http.server
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from phasegate import Loop, Pipeline, RunEvent, Task
from phasegate.agents.claude.sandbox import sandbox_problem
from phasegate.evidence.confinement import Blocked
from phasegate.evidence.transcript import (
    BRIEF_LIMIT,
    Entry,
    SandboxBlocked,
    ToolRefused,
    ToolResult,
)
from phasegate.running import RunOptions, run_definition
from phasegate.testing import Script, ScriptedAgent
from phasegate.testing.pytest_plugin import ScriptedServerFactory
from phasegate.workspace.command_sandbox import bwrap_problem

DONE = "PHASE 1 COMPLETE: done"


def require_sandbox() -> None:
    """Skip the test where the sandbox cannot run (fail instead under
    ``PHASEGATE_REQUIRE_SANDBOX=1``, as in CI)."""
    problem = sandbox_problem()
    if problem is None:
        return
    if os.environ.get("PHASEGATE_REQUIRE_SANDBOX") == "1":
        pytest.fail(f"PHASEGATE_REQUIRE_SANDBOX=1 but {problem}: `make sandbox-tools`")
    pytest.skip(f"Claude Code's sandbox cannot run here: {problem} (`make sandbox-tools`)")


def require_bwrap(workdir: Path) -> None:
    """Skip the test where a check's command cannot be confined (bubblewrap missing or
    unable to start; fail instead under ``PHASEGATE_REQUIRE_SANDBOX=1``, as in CI)."""
    problem = bwrap_problem(workdir)
    if problem is None:
        return
    if os.environ.get("PHASEGATE_REQUIRE_SANDBOX") == "1":
        pytest.fail(f"PHASEGATE_REQUIRE_SANDBOX=1 but {problem}: `make sandbox-tools`")
    pytest.skip(f"check commands cannot be confined here: {problem} (`make sandbox-tools`)")


class ConfiningAgent(ScriptedAgent):
    """The scripted agent, saying its runtime can confine a session: a run asked for a
    sandbox takes it as started, so the gate's own checks are confined. Its tool calls are
    not (it runs no commands; its file tools keep to the work directory anyway)."""

    name = "confining-scripted"

    def sandbox_problem(self) -> str | None:
        """Nothing keeps it from confining."""
        return None


def calls(*steps: dict[str, Any], then: str = DONE) -> list[dict[str, Any]]:
    """A script's replies: each of ``steps`` (``{Tool: input}``) alone in a reply, one after
    the other whatever the previous call's result, then ``then`` as the last words."""
    return [{"tools": [step]} for step in steps] + [{"text": then}]


def bash(*commands: str, then: str = DONE) -> list[dict[str, Any]]:
    """:func:`calls` of one Bash command each."""
    return calls(*({"Bash": {"command": command}} for command in commands), then=then)


def confined_task(**fields: Any) -> Task:
    """A one-phase task confined by a sandbox (``sandbox: on`` unless ``fields`` say)."""
    return Task.model_validate(
        {"name": "confined", "phases": [{"name": "work", "instructions": "Work."}],
         "sandbox": "on", **fields}
    )  # fmt: skip


def run_scripted(
    server_for: ScriptedServerFactory,
    definition: Task | Pipeline | Loop,
    workdir: Path,
    replies: list[dict[str, Any]],
    options: RunOptions | None = None,
    events: list[RunEvent] | None = None,
    **agent: Any,
) -> Any:
    """The report of ``definition`` run by the real CLI on ``replies``; its events go to
    ``events`` when given; ``agent``: more options of the Claude agent."""
    server = server_for(Script.model_validate({"replies": replies}))
    claude = server.claude_agent(**({"timeout": 180, "request_timeout": 30} | agent))
    options = options or RunOptions(retries=0)
    if events is not None:
        options = dataclasses.replace(options, on_event=events.append)
    report = asyncio.run(run_definition(definition, workdir, claude, options))
    assert not server.unmatched, server.unmatched
    return report


def recorded(
    entries: tuple[Entry, ...], events: list[RunEvent], blocked: tuple[Blocked, ...]
) -> list[dict[str, Any]]:
    """The ``sandbox.blocked`` lines of a run, once each is checked against the run's other
    records of it: one ``blocked`` entry per line, in order, right after the refusal or the
    result that shows it, and the report's list made of the same attempts."""
    found = [e for e in entries if isinstance(e, SandboxBlocked)]
    lines = [e.as_dict() for e in events if e.event == "sandbox.blocked"]
    assert [(e.blocked, e.tool_use_id, e.target, e.detail) for e in found] == [
        (line["kind"], line["tool_use_id"], line["target"], line["detail"]) for line in lines
    ]
    assert blocked == tuple(Blocked.of(e) for e in found)
    for entry in found:
        shown_by = entries[: entries.index(entry)]
        before = next(e for e in reversed(shown_by) if not isinstance(e, SandboxBlocked))
        assert isinstance(before, ToolRefused | ToolResult)
        assert before.tool_use_id == entry.tool_use_id
    return lines


def as_recorded(text: str) -> str:
    """A command as a ``blocked`` entry's target holds it: the call's brief, at most
    ``BRIEF_LIMIT`` characters (a command naming a path under CI's 100-character TMPDIR is
    longer)."""
    return text if len(text) <= BRIEF_LIMIT else text[: BRIEF_LIMIT - 1] + "…"


def results(report: Any) -> list[str]:
    """The content of each tool result of a run, in order."""
    assert report.transcript is not None
    return [e.content for e in report.transcript.entries if isinstance(e, ToolResult)]


def files_under(folder: Path) -> list[str]:
    """Every path under ``folder`` (relative, sorted), Claude Code's own ``.claude`` aside."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if ".claude" not in p.parts)


@dataclasses.dataclass
class LocalServer:
    """An HTTP server on 127.0.0.1 that answers ``hello-from-local`` and keeps the path of
    every request that reached it."""

    port: int
    hits: list[str]


@contextlib.contextmanager
def local_server() -> Iterator[LocalServer]:
    """A :class:`LocalServer` for the block, shut down after it."""
    hits: list[str] = []

    class Hello(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"hello-from-local")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield LocalServer(port=server.server_address[1], hits=hits)
    finally:
        server.shutdown()
        server.server_close()
