"""The plugin's commands and its Stop hook as processes (what the skills and hooks start):
usage and clear errors for bad arguments, status, stop, judge, and the block cap."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.scenarios import EXAMPLE

SESSION = "commands-0000-0000-0000-000000000001"


def _plugin(
    *args: str, work: Path, stdin: str = "", session: str | None = SESSION
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(work)}
    env.pop("CLAUDE_CODE_SESSION_ID", None)
    if session is not None:
        env["CLAUDE_CODE_SESSION_ID"] = session
    return subprocess.run(
        [sys.executable, "-m", "phasegate._plugin", *args],
        input=stdin, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A copy of the example project."""
    folder = tmp_path / "work"
    shutil.copytree(EXAMPLE / "project", folder)
    return folder


def _state(work: Path) -> dict[str, Any]:
    return dict(json.loads((work / ".phasegate/plugin" / SESSION / "state.json").read_text()))


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ((), "name the task file to run"),
        (("missing.yaml",), "missing.yaml"),
        ((str(EXAMPLE / "task.yaml"), "oops"), "'oops' is not ID=VALUE"),
        ((str(EXAMPLE / "task.yaml"), "nope=1"), "nope"),
    ],
)
def test_a_bad_run_says_what_is_wrong_and_gates_nothing(
    work: Path, args: tuple[str, ...], says: str
) -> None:
    """A missing task file, a malformed or unknown input: the message names it, gives the
    usage, tells the model to relay it, and no state is written."""
    done = _plugin("run", *args, work=work)
    assert done.returncode == 0 and "Traceback" not in done.stdout + done.stderr
    assert says in done.stdout
    assert "Usage: /phasegate:run TASK_FILE [ID=VALUE ...]" in done.stdout
    assert "Nothing is gated" in done.stdout
    assert not (work / ".phasegate").exists()


def test_a_command_outside_a_session_refuses_to_gate_anything(work: Path) -> None:
    """No (or a malformed) session id: nothing can be keyed to a session, so nothing starts."""
    for session in (None, "", "../../etc"):
        done = _plugin("run", str(EXAMPLE / "task.yaml"), work=work, session=session)
        assert "CLAUDE_CODE_SESSION_ID is missing or malformed" in done.stdout
    assert not (work / ".phasegate").exists()


def test_a_second_run_in_the_same_session_is_refused_until_the_first_is_stopped(
    work: Path,
) -> None:
    """One gated task per session: the second is refused; after /phasegate:stop the state
    says stopped, the log closes the run with the stop as its error, and a new run starts."""
    task = str(EXAMPLE / "task.yaml")
    first = _plugin("run", task, work=work)
    assert "PHASE 1 COMPLETE" in first.stdout and "phasegate run " in first.stdout
    again = _plugin("run", task, work=work)
    assert "already runs the gated task 'fix-vulnerability'" in again.stdout
    status = _plugin("status", work=work)
    assert "is running; gate checks left: 3; last issues: none" in status.stdout
    stopped = _plugin("stop", work=work)
    assert "is stopped; this session goes on ungated" in stopped.stdout
    assert _state(work)["status"] == "stopped"
    events = [
        json.loads(line) for line in (work / ".phasegate/events.jsonl").read_text().splitlines()
    ]
    (closing,) = [e for e in events if e["event"] == "run.completed"]
    assert closing["error"].startswith("stopped") and closing["via"] == "plugin"
    assert (
        "is running" in _plugin("run", task, work=work).stdout + _plugin("status", work=work).stdout
    )


def _session_log(tmp_path: Path, work: Path, texts: list[str]) -> Path:
    run_id = _state(work)["run_id"]
    lines = [
        {
            "type": "user",
            "cwd": str(work),
            "message": {"role": "user", "content": f"phasegate run {run_id}"},
        }
    ]
    lines += [{"type": "assistant", "cwd": str(work),
               "message": {"id": f"m{i}", "role": "assistant", "model": "m", "type": "message",
                           "content": [{"type": "text", "text": text}]}}
              for i, text in enumerate(texts)]  # fmt: skip
    log = tmp_path / "session.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return log


def _stop(work: Path, log: Path, *, active: bool) -> dict[str, Any]:
    hook = {"session_id": SESSION, "cwd": str(work), "transcript_path": str(log),
            "hook_event_name": "Stop", "stop_hook_active": active,
            "last_assistant_message": "Nothing yet."}  # fmt: skip
    done = _plugin("hook", "stop", work=work, stdin=json.dumps(hook))
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def test_the_gate_ends_the_turn_itself_before_claude_codes_cap_and_goes_on_next_turn(
    work: Path, tmp_path: Path
) -> None:
    """With checks to spare, the 8th block in a row of one turn is not sent: the turn ends
    with one message saying where the task stands; the next turn's stop blocks again."""
    _plugin("run", str(EXAMPLE / "task.yaml"), work=work)
    state_file = work / ".phasegate/plugin" / SESSION / "state.json"
    state_file.write_text(json.dumps({**_state(work), "max_attempts": 20}))
    log = _session_log(tmp_path, work, ["Nothing yet."])
    answers = [_stop(work, log, active=index > 0) for index in range(8)]
    assert [a.get("decision") for a in answers] == ["block"] * 7 + [None]
    assert "turn ends here (Claude Code allows 8)" in answers[-1]["systemMessage"]
    assert "tool_not_used" in answers[-1]["systemMessage"]
    assert "'go on'" in answers[-1]["systemMessage"]
    assert _stop(work, log, active=False)["decision"] == "block"
    assert _state(work)["status"] == "running"


def test_a_session_without_gated_work_is_never_blocked_by_the_stop_hook(
    work: Path, tmp_path: Path
) -> None:
    """Another session's state in the same project, or a malformed session id: silence."""
    _plugin("run", str(EXAMPLE / "task.yaml"), work=work)
    log = _session_log(tmp_path, work, ["Done."])
    for session in ("other-0000-0000-0000-000000000002", "", "..", None):
        hook = {"session_id": session, "cwd": str(work), "transcript_path": str(log),
                "hook_event_name": "Stop", "stop_hook_active": False}  # fmt: skip
        done = _plugin("hook", "stop", work=work, stdin=json.dumps(hook))
        assert (done.returncode, done.stdout) == (0, "")


def test_judge_says_what_the_session_lacks_without_blocking_or_counting(
    work: Path, tmp_path: Path
) -> None:
    """/phasegate:judge on a session that only talked: the gate's issues, no check counted."""
    _plugin("run", str(EXAMPLE / "task.yaml"), work=work)
    state = _state(work)
    log = _session_log(tmp_path, work, ["I looked around."])
    (work / ".phasegate/plugin" / SESSION / "state.json").write_text(
        json.dumps({**state, "transcript_path": str(log)})
    )
    done = _plugin("judge", str(EXAMPLE / "task.yaml"), work=work)
    assert "does not pass 'fix-vulnerability' (nothing is blocked)" in done.stdout
    assert '"code": "tool_not_used"' in done.stdout
    assert _state(work)["gate"] == state["gate"]


POLICY: dict[str, Any] = {
    "name": "look-first",
    "inputs": [{"id": "file", "question": "Which file should be read first?", "header": "File"}],
    "phases": [
        {"name": "look", "instructions": "Read {{ file }}.", "require_tools": ["Read"],
         "allow_tools": ["Read"]},
        {"name": "fix", "instructions": "Fix it.", "require_tools": ["Edit"]},
    ],
}  # fmt: skip


def _pre(work: Path, tool: str) -> dict[str, Any] | None:
    hook = {"session_id": SESSION, "cwd": str(work), "hook_event_name": "PreToolUse",
            "tool_name": tool, "tool_input": {"file_path": str(work / "app.py")},
            "tool_use_id": f"toolu_{tool}"}  # fmt: skip
    done = _plugin("hook", "pre", work=work, stdin=json.dumps(hook))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None


def test_inputs_fill_the_prompt_and_the_tool_policy_fails_closed_when_it_cannot_be_checked(
    work: Path, tmp_path: Path
) -> None:
    """``file=app.py`` fills the prompt; PreToolUse lets Read through and refuses Edit in
    the first phase; with the task file gone the policy cannot be checked, and Edit is
    refused with that reason, never let through."""
    task = tmp_path / "look.json"
    task.write_text(json.dumps(POLICY))
    started = _plugin("run", str(task), "file=app.py", work=work)
    assert "Read app.py." in started.stdout
    assert _pre(work, "Read") is None
    refused = _pre(work, "Edit")
    assert refused is not None
    decision = refused["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny"
    assert decision["permissionDecisionReason"].startswith(
        "Refused: Edit is not allowed in phase 1"
    )
    task.unlink()
    failed = _pre(work, "Edit")
    assert failed is not None
    reason = failed["hookSpecificOutput"]["permissionDecisionReason"]
    assert "could not check this call" in reason and "/phasegate:stop" in reason


def test_judge_without_a_gated_task_reads_the_disk_from_git_as_phasegate_judge_does(
    work: Path, tmp_path: Path
) -> None:
    """A session that fixed the bug without /phasegate:run: /phasegate:judge finds its log
    under Claude Code's config folder, the change from git, and says the session passes."""
    for args in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t",
                 "commit", "-qm", "start"]):  # fmt: skip
        subprocess.run(["git", *args], cwd=work, check=True, capture_output=True)
    app = work / "app.py"
    buggy = "    return eval(expression)  # runs any Python the user sends, not just arithmetic\n"
    fixed = "    return float(expression)  # only numbers\n"
    app.write_text(app.read_text().replace(buggy, fixed))
    edit = {"file_path": str(app), "old_string": buggy, "new_string": fixed}
    claim = ('PHASE 1 COMPLETE: Files have been edited\n\n```json\n{"files_changed": ["app.py"], '
             '"description": "Replaced eval with float parsing."}\n```')  # fmt: skip
    lines = [
        {"type": "user", "message": {"role": "user", "content": "Fix app.py."}},
        {"type": "assistant", "message": {"id": "m1", "role": "assistant", "model": "m",
         "type": "message", "content": [{"type": "tool_use", "id": "t1", "name": "Edit",
                                         "input": edit}]}},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}},
        {"type": "assistant", "message": {"id": "m2", "role": "assistant", "model": "m",
         "type": "message", "content": [{"type": "text", "text": claim}]}},
    ]  # fmt: skip
    config = tmp_path / "config"
    log = config / "projects" / "-work" / f"{SESSION}.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text("".join(json.dumps({**line, "cwd": str(work)}) + "\n" for line in lines))
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(work), "CLAUDE_CODE_SESSION_ID": SESSION,
           "CLAUDE_CONFIG_DIR": str(config)}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "phasegate._plugin", "judge", str(EXAMPLE / "task.yaml")],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert "this session so far passes 'fix-vulnerability'" in done.stdout, done.stdout
    assert not (work / ".phasegate").exists()


def test_a_missing_input_is_asked_with_ask_user_question_and_nothing_is_gated(
    work: Path, tmp_path: Path
) -> None:
    """Without ``file=``, the command's answer tells the model to ask the user with
    AskUserQuestion (the input as phasegate plan's question) and to run the command again;
    no state is written until then."""
    task = tmp_path / "look.json"
    task.write_text(json.dumps(POLICY))
    done = _plugin("run", str(task), work=work)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "needs values for file" in text and "AskUserQuestion" in text
    asked = json.loads(text[text.index("{") : text.rindex("}") + 1])
    (question,) = asked["questions"]
    assert (question["question"], question["header"]) == (
        "Which file should be read first?", "File"
    )  # fmt: skip
    assert f"/phasegate:run {task} ID=VALUE" in text
    assert not (work / ".phasegate/plugin" / SESSION).exists()


def test_a_read_only_task_refuses_writing_tools_before_they_run(work: Path, tmp_path: Path) -> None:
    """PreToolUse lets Read through and refuses Edit and Bash with the tools the read_only
    task offers; the refusal is kept in the session's evidence."""
    task = tmp_path / "read.json"
    task.write_text(json.dumps({"name": "review", "read_only": True,
                                "phases": [{"name": "review", "instructions": "Review app.py.",
                                            "require_tools": ["Read"]}]}))  # fmt: skip
    _plugin("run", str(task), work=work)
    assert _pre(work, "Read") is None
    for tool in ("Edit", "Bash"):
        refused = _pre(work, tool)
        assert refused is not None
        reason = refused["hookSpecificOutput"]["permissionDecisionReason"]
        assert reason.startswith(f"Refused: {tool} is not offered to a read_only task")
        assert "Read, Grep, Glob" in reason
    lines = (work / ".phasegate/plugin" / SESSION / "evidence.jsonl").read_text().splitlines()
    assert [json.loads(line)["name"] for line in lines] == ["Edit", "Bash"]


def test_an_output_phase_with_structured_output_asks_for_printed_json_in_a_session(
    work: Path, tmp_path: Path
) -> None:
    """A user's session has no StructuredOutput tool: the prompt asks for the JSON as the
    completion mode allows, never through that tool, and the schema still applies."""
    task = tmp_path / "structured.json"
    task.write_text(json.dumps({"name": "report", "phases": [
        {"name": "answer", "instructions": "Report.", "structured_output": True,
         "output_schema": {"type": "object", "required": ["ok"]}}]}))  # fmt: skip
    done = _plugin("run", str(task), work=work)
    assert "StructuredOutput" not in done.stdout
    assert "submit_summary" in done.stdout
    assert '"required":["ok"]' in "".join(done.stdout.split())
