"""What the gate adds to each request's input, checked against what the real Claude Code CLI
sent the scripted model server: the completion tools' definitions character for character,
and the gate's text in every request that really carried it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from phasegate import RunEvent, Runner, RunReport, Task
from phasegate.agents.scripted.model_server import RecordedRequest, ScriptedModelServer
from phasegate.evidence.transcript import ToolCall, ToolResult, UserText
from phasegate.phases.completion import COMPLETION_TOOLS
from phasegate.prompts.gate_text import gate_characters, task_words
from phasegate.testing import Script
from phasegate.testing.pytest_plugin import ScriptedServerFactory
from tests.helpers.scenarios import EDIT, GOOD_JSON, MARKER, NO_RETRIES
from tests.helpers.usage import sent_usage

pytestmark = pytest.mark.cli

SUMMARY = {"files_changed": ["app.py"], "description": "Replaced eval with float parsing."}
SCRIPTS = {
    # Claims the phase before the edit: the gate's feedback comes back through the Stop hook.
    "markers": [
        {"text": MARKER},
        {"when": "user", "tools": [EDIT]},
        {"when": "tool_result", "text": f"{MARKER}\n{GOOD_JSON}"},
    ],
    # The same through the completion tools: the refusal is the tool's answer.
    "tools": [
        {"tools": [{"phase_complete": {"phase": 1, "note": "done"}}]},
        {"when": "tool_error", "tools": [EDIT]},
        {"when": "tool_result", "tools": [{"phase_complete": {"phase": 1, "note": "fixed"}}]},
        {"when": "tool_result", "tools": [{"submit_summary": {"summary": SUMMARY}}]},
        {"text": "Done."},
    ],
}


def _strings(value: object) -> Iterator[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _gate_texts(report: RunReport, task: Task) -> list[tuple[str, int]]:
    """Each text phasegate wrote in the run, with how many of its characters are the gate's."""
    assert report.transcript is not None
    entries = report.transcript.entries
    answers = {e.id for e in entries if isinstance(e, ToolCall) and e.name in COMPLETION_TOOLS}
    texts = [
        (e.text, gate_characters(e.text, task_words(task)))
        for e in entries
        if isinstance(e, UserText)
    ]
    texts += [
        (e.content, len(e.content))
        for e in entries
        if isinstance(e, ToolResult) and e.tool_use_id in answers
    ]
    return texts


def _carried(request: RecordedRequest, texts: list[tuple[str, int]]) -> int:
    """The gate's characters of the texts this request really carried in its messages."""
    body: dict[str, Any] = request.body or {}
    sent = list(_strings(body.get("messages")))
    return sum(chars for text, chars in texts if any(text in string for string in sent))


def _tool_characters(request: RecordedRequest) -> int:
    body: dict[str, Any] = request.body or {}
    return sum(
        len(json.dumps(tool, ensure_ascii=False, separators=(",", ":")))
        for tool in body.get("tools") or []
        if tool.get("name") in COMPLETION_TOOLS
    )


@pytest.mark.parametrize("script", ["markers", "tools"])
def test_the_gates_share_is_what_the_cli_really_sent_request_by_request(
    task: Task, project: Any, scripted_model_server: ScriptedServerFactory, script: str
) -> None:
    """Tool definitions as sent, character for character; the gate's text (the prompt's
    scaffolding, the feedback or the tools' answers) counted in every request that carried
    it; the input the API counted; and the phases adding up to the run."""
    server: ScriptedModelServer = scripted_model_server(
        Script.model_validate({"replies": SCRIPTS[script]})
    )
    events: list[RunEvent] = []
    agent = server.claude_agent(timeout=90, request_timeout=20)
    report = Runner(agent, retry=NO_RETRIES, on_event=events.append).run_sync(task, project)
    assert report.verdict == "accepted", report.model_dump_json(indent=1)[:3000]
    requests = [r for r in server.main_requests() if r.status == 200]
    texts = _gate_texts(report, task)
    assert "validation_failed" in texts[1][0] or "not accepted" in texts[1][0]  # a refusal
    overhead = report.overhead
    assert overhead.requests == len(requests)
    assert overhead.tool_characters == sum(_tool_characters(r) for r in requests) > 0
    assert overhead.text_characters == sum(_carried(r, texts) for r in requests)
    assert overhead.input_tokens == sent_usage(server).input_tokens  # no cache: the server's
    # The task's own words are not the gate's: the prompt counts less than its length.
    prompt = texts[0]
    assert 0 < prompt[1] < len(prompt[0]) - len(task.phases[0].instructions)
    for name in type(overhead).model_fields:
        assert sum(getattr(p.overhead, name) for p in report.phases) == getattr(overhead, name)
    closing = {e.event: e.fields for e in events if e.event == "run.completed"}
    assert closing["run.completed"]["overhead"] == overhead.model_dump()
    phase_lines = [e.fields["overhead"] for e in events if e.event == "phase.completed"]
    assert phase_lines == [p.overhead.model_dump() for p in report.phases]
