"""``/phasegate:loop --until 'rubric: ...'`` in a real Claude Code session (print mode, the
plugin loaded with ``--plugin-dir``) against the scripted model server: at each stop the
plugin's Stop hook runs the grader as a headless ``claude -p`` of its own (here the bundled
CLI, named by ``PHASEGATE_CLAUDE_CLI``), talking to the same server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from phasegate.prompts.grader import GRADER_OPENING
from phasegate.testing import Script
from phasegate.testing.pytest_plugin import ScriptedServerFactory
from tests.helpers.plugin import claude, plugin_env, run_claude, session_state

pytestmark = pytest.mark.cli

MISSING = "DELETE /users/{id}"
"""What the first design.md leaves out, in the grader's first reason."""


def _verdict(verdict: str, reason: str) -> dict[str, Any]:
    """A grader's reply: its verdict on the one criterion, as StructuredOutput."""
    return {
        "grader": True,
        "tools": [{"StructuredOutput": {"verdicts": [
            {"id": "c1", "verdict": verdict, "reason": reason}]}}],
    }  # fmt: skip


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_loop_until_a_rubric_is_graded_at_each_stop_and_ends_once_it_is_met(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """The first design.md misses an endpoint: the Stop hook's grader (a separate CLI
    session that read the file) says not met, and the hook blocks with its reason as a
    failed exit check; Claude adds the endpoint, the grader says met, the loop ends
    accepted after two iterations. Each grader session is a conversation of its own that
    starts with the grader's prompt and holds the file's text, never the session's."""
    model = {
        "replies": [
            {"contains": "Write design.md",
             "tools": [{"Write": {"file_path": "design.md", "content": "GET /users\n"}}]},
            {"when": "tool_result", "text": "design.md is written."},
            _verdict("not_met", f"design.md lists GET /users but not {MISSING}"),
            {"when": "user", "contains": MISSING,
             "tools": [{"Write": {"file_path": "design.md",
                                  "content": f"GET /users\n{MISSING}\n"}}]},
            {"when": "tool_result", "text": "Added it."},
            _verdict("met", f"design.md: '{MISSING}'"),
        ]
    }  # fmt: skip
    server = scripted_model_server(Script.model_validate(model))
    work = tmp_path / "work"
    work.mkdir()
    command = (
        "/phasegate:loop Write design.md with the two user endpoints"
        " --until 'rubric: design.md names every endpoint' --max-iterations 3"
    )
    session = run_claude(command, work, plugin_env(server, PHASEGATE_CLAUDE_CLI=str(claude())))

    assert session.code == 0, session.stderr
    assert server.unmatched == [] and server.exhausted
    state = session_state(work, session.session_id)
    assert state["kind"] == "loop" and state["status"] == "accepted", state.get("last_issues")
    assert state["loop"]["until"] == [{"rubric": "design.md names every endpoint"}]
    (stage,) = state["report"]["stages"]
    assert stage["attempts"] == 2
    # The block's feedback reached Claude with the grader's reason.
    feedback = [t for t in server.user_texts() if "exit_condition_failed" in t]
    assert len(feedback) == 1
    assert f"c1 not met: design.md lists GET /users but not {MISSING}" in feedback[0]
    # Two grader sessions, each its own conversation holding design.md's text at the time.
    graders = server.grader_requests()
    assert len(graders) == 2
    assert all(r.last_text.startswith(GRADER_OPENING) for r in graders)
    bodies = [request.body or {} for request in graders]
    for body in bodies:  # its own conversation: nothing of the session's but the data
        sent = json.dumps(body)
        assert "File created successfully" not in sent and "<command-name>" not in sent
        assert not [m for m in body["messages"] if m["role"] == "assistant"]
    assert MISSING not in graders[0].last_text and MISSING in graders[1].last_text
    assert "design.md is written." in graders[0].last_text  # the agent's words, as data
    tools = sorted(t["name"] for t in bodies[0]["tools"] if not t.get("defer_loading"))
    assert tools == ["Glob", "Grep", "Read", "StructuredOutput"]
    log = _events(work / ".phasegate/events.jsonl")
    assert [e["passed"] for e in log if e["event"] == "stage.checked"] == [False, True]
    (completed,) = [e for e in log if e["event"] == "pipeline.completed"]
    assert completed["verdict"] == "accepted" and completed["iterations"] == 2
    # The grader's two sessions apart, and agent + grader + unattributed = the run.
    report = state["report"]
    assert report["grader_usage"]["input_tokens"] > 0
    assert completed["grader_usage"] == report["grader_usage"]
    for count in ("input_tokens", "output_tokens"):
        parts = sum(s["usage"][count] for s in report["stages"])
        parts += report["grader_usage"][count] + report["unattributed_usage"][count]
        assert report["usage"][count] == parts
        assert completed[count] == report["usage"][count]


def test_a_sentence_in_none_of_the_forms_is_graded_as_a_rubric(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """``--until 'the API is documented'`` is a rubric of one criterion: the grader's met
    ends the loop at its first stop."""
    model = {
        "replies": [
            {"contains": "Document the API",
             "tools": [{"Write": {"file_path": "API.md", "content": "GET /users\n"}}]},
            {"when": "tool_result", "text": "Documented."},
            _verdict("met", "API.md documents GET /users"),
        ]
    }  # fmt: skip
    server = scripted_model_server(Script.model_validate(model))
    work = tmp_path / "work"
    work.mkdir()
    session = run_claude(
        "/phasegate:loop Document the API --until 'the API is documented'",
        work,
        plugin_env(server, PHASEGATE_CLAUDE_CLI=str(claude())),
    )
    assert session.code == 0, session.stderr
    state = session_state(work, session.session_id)
    assert state["loop"]["until"] == [{"rubric": "the API is documented"}]
    assert state["status"] == "accepted"
    assert server.unmatched == [] and server.exhausted


def test_a_rubric_with_no_claude_to_grade_it_fails_closed_saying_why(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """``PHASEGATE_CLAUDE_CLI`` names no executable: the rubric is not met, its detail says
    the grader could not start and what to set, the loop is rejected, and nothing reached
    the model but the session's own turns."""
    model = {"replies": [{"text": "It is documented."}]}
    server = scripted_model_server(Script.model_validate(model))
    work = tmp_path / "work"
    work.mkdir()
    session = run_claude(
        "/phasegate:loop Document the API --until 'rubric: the API is documented'"
        " --max-iterations 1",
        work,
        plugin_env(server, PHASEGATE_CLAUDE_CLI=str(tmp_path / "no-claude")),
    )
    assert session.code == 0, session.stderr
    state = session_state(work, session.session_id)
    assert state["status"] == "rejected"
    (check,) = state["report"]["stages"][0]["checks"]
    assert check["kind"] == "rubric" and check["ok"] is False
    assert "the grader gave no verdict: it could not start" in check["detail"]
    assert "PHASEGATE_CLAUDE_CLI" in check["detail"] and "Traceback" not in check["detail"]
    assert len(server.main_requests()) == 1


def test_a_tasks_rubric_check_is_graded_by_the_same_headless_grader(
    tmp_path: Path, scripted_model_server: ScriptedServerFactory
) -> None:
    """``/phasegate:run`` of a task whose phase checks a file and a rubric: once the file
    exists the Stop hook's grader judges the rubric, and its met accepts the task, the
    verdict and its reason in the phase's report."""
    (tmp_path / "task.yaml").write_text(
        "name: doc\nphases:\n  - name: write\n    instructions: Write API.md.\n"
        "    checks:\n      - file_exists: API.md\n      - rubric: API.md documents GET /users\n"
    )
    model = {
        "replies": [
            {"contains": "Write API.md",
             "tools": [{"Write": {"file_path": "API.md", "content": "GET /users\n"}}]},
            {"when": "tool_result", "text": "PHASE 1 COMPLETE: API.md is written."},
            _verdict("met", "API.md: 'GET /users'"),
        ]
    }  # fmt: skip
    server = scripted_model_server(Script.model_validate(model))
    session = run_claude(
        "/phasegate:run task.yaml",
        tmp_path,
        plugin_env(server, PHASEGATE_CLAUDE_CLI=str(claude())),
    )
    assert session.code == 0, session.stderr
    assert server.unmatched == [] and server.exhausted
    state = session_state(tmp_path, session.session_id)
    assert state["status"] == "accepted"
    checks = state["report"]["phases"][0]["checks"]
    assert [(c["kind"], c["passed"]) for c in checks] == [("file_exists", True), ("rubric", True)]
    assert checks[1]["detail"] == "c1 met: API.md: 'GET /users'"
    assert checks[1]["criteria"][0]["verdict"] == "met"
    report = state["report"]
    assert report["grader_usage"]["input_tokens"] > 0
    assert report["phases"][0]["grader_usage"] == report["grader_usage"]
    for count in ("input_tokens", "output_tokens"):
        parts = sum(p["usage"][count] for p in report["phases"])
        parts += report["grader_usage"][count] + report["unattributed_usage"][count]
        assert report["usage"][count] == parts
