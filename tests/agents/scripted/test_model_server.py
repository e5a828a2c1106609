"""The scripted model server: request reading and faults over HTTP, then the real Claude Code CLI.

Tests marked ``cli`` run the CLI bundled with claude-agent-sdk, offline, against the server.
Set ``PHASEGATE_UPDATE_TRANSCRIPTS=1`` to rewrite the transcripts in tests/fixtures/transcripts.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from phasegate.agents.scripted.model_server import ScriptedModelServer
from phasegate.agents.scripted.script import HttpFault, Script
from phasegate.prompts.grader import GRADER_OPENING
from phasegate.testing.pytest_plugin import ScriptedServerFactory

TRANSCRIPTS = Path(__file__).parents[2] / "fixtures" / "transcripts"
APP = "def parse(x):\n    return eval(x)\n"
MARKER = "PHASE 1 COMPLETE: Files have been edited"
SUMMARY = '{"files_changed": ["app.py"], "description": "parse() uses int() instead of eval()"}'


def script(*replies: dict[str, Any]) -> Script:
    """A script from reply dicts written as in a script file."""
    return Script.model_validate({"replies": list(replies)})


# -- talking HTTP to the server directly ---------------------------------------------------------


def request_body(
    *messages: dict[str, Any], tools: bool = True, stream: bool = True
) -> dict[str, Any]:
    """A Messages API request shaped like the CLI's: environment in a system-role message."""
    environment = {"role": "system", "content": " - Primary working directory: /work/project\n"}
    body: dict[str, Any] = {
        "model": "claude-test",
        "messages": [messages[0], environment, *messages[1:]],
        "stream": stream,
    }
    if tools:
        body["tools"] = []
    return body


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def tool_results(*results: tuple[str, bool]) -> dict[str, Any]:
    blocks = [
        {"type": "tool_result", "tool_use_id": f"t{i}", "content": content, "is_error": failed}
        for i, (content, failed) in enumerate(results)
    ]
    return {"role": "user", "content": blocks}


@dataclass
class HttpAnswer:
    status: int
    headers: dict[str, str]
    body: bytes


def call(
    server: ScriptedModelServer,
    body: dict[str, Any] | None,
    path: str = "/v1/messages?beta=true",
) -> HttpAnswer:
    """POST ``body`` (GET when None) and read the whole answer."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        if body is None:
            connection.request("GET", path)
        else:
            connection.request("POST", path, json.dumps(body), {"content-type": "application/json"})
        response = connection.getresponse()
        headers = {name.lower(): value for name, value in response.getheaders()}
        return HttpAnswer(response.status, headers, response.read())
    finally:
        connection.close()


def sse_message(raw: bytes) -> dict[str, Any]:
    """Rebuild the message a stream of server-sent events carries."""
    message: dict[str, Any] = {}
    for chunk in raw.decode().strip().split("\n\n"):
        name_line, data_line = chunk.split("\n")
        name, data = name_line.removeprefix("event: "), json.loads(data_line.removeprefix("data: "))
        assert data["type"] == name
        if name == "message_start":
            message = data["message"]
        elif name == "content_block_start":
            message["content"].append(dict(data["content_block"], partial=""))
        elif name == "content_block_delta":
            block, delta = message["content"][data["index"]], data["delta"]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            else:
                block["partial"] += delta["partial_json"]
        elif name == "content_block_stop":
            block = message["content"][data["index"]]
            if block["type"] == "tool_use":
                block["input"] = json.loads(block["partial"])
            del block["partial"]
        elif name == "message_delta":
            message["stop_reason"] = data["delta"]["stop_reason"]
    return message


# -- reading requests ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("messages", "last", "last_text"),
    [
        pytest.param([user("<system-reminder>\nx\n</system-reminder>\nFix it")], "start", "Fix it"),
        pytest.param(
            [user("Fix"), assistant("Reading"), tool_results(("ok", False))], "tool_result", "ok"
        ),
        pytest.param(
            [user("Fix"), assistant("Edit"), tool_results(("ok", False), ("<e>bad</e>", True))],
            "tool_error",
            "ok\n<e>bad</e>",
        ),
        pytest.param(
            [user("Fix"), assistant("Done"), user("Stop hook feedback:\nmore")],
            "user",
            "Stop hook feedback:\nmore",
        ),
    ],
)
def test_the_last_message_decides_which_reply_fits(
    messages: list[dict[str, Any]], last: str, last_text: str
) -> None:
    with ScriptedModelServer(script({"text": "answer"})) as server:
        # The CLI appends a system-role notice after a Stop hook's feedback: it is skipped.
        call(server, request_body(*messages, {"role": "system", "content": "hook notice"}))
        (record,) = server.requests
    assert (record.main, record.last, record.last_text) == (True, last, last_text)


def test_relative_paths_become_absolute_in_the_work_directory() -> None:
    """But a path from the home folder, which Claude Code expands itself."""
    tools = [
        {"Edit": {"file_path": "src/app.py", "old_string": "a", "new_string": "b"}},
        {"Read": {"file_path": "/etc/hostname"}},
        {"Write": {"file_path": "../outside.txt", "content": "x"}},
        {"Bash": {"command": "cat app.py"}},
        {"Write": {"file_path": "~/.bashrc", "content": "x"}},
    ]
    with ScriptedModelServer(script({"text": "Fixing", "tools": tools})) as server:
        message = sse_message(call(server, request_body(user("Fix"))).body)
    assert message["stop_reason"] == "tool_use"
    assert [block["type"] for block in message["content"]] == ["text"] + ["tool_use"] * 5
    uses = message["content"][1:]
    assert [use["id"] for use in uses] == [f"toolu_scripted_000{i}" for i in range(1, 6)]
    assert [use["input"].get("file_path") for use in uses] == [
        "/work/project/src/app.py",
        "/etc/hostname",
        "/work/outside.txt",
        None,
        "~/.bashrc",
    ]
    assert uses[3]["input"] == {"command": "cat app.py"}


@pytest.mark.parametrize(
    "where",
    ["system-field", "system-message", "user-reminder"],
)
def test_the_work_directory_is_found_where_the_cli_puts_it(where: str) -> None:
    line = "# Environment\n - Primary working directory: /srv/repo\n - Is a git repository: false"
    body: dict[str, Any] = {"model": "m", "tools": [], "stream": False, "messages": [user("Fix")]}
    if where == "system-field":
        body["system"] = [
            {"type": "text", "text": "You are Claude."},
            {"type": "text", "text": line},
        ]
    elif where == "system-message":
        body["messages"].append({"role": "system", "content": line})
    else:
        body["messages"][0]["content"].insert(
            0, {"type": "text", "text": f"<system-reminder>\n{line}\n</system-reminder>"}
        )
    with ScriptedModelServer(script({"tools": [{"Read": {"file_path": "a.py"}}]})) as server:
        answer = call(server, body)
    message = json.loads(answer.body)  # not streamed: a plain JSON message
    assert answer.headers["content-type"] == "application/json"
    assert message["content"][0]["input"] == {"file_path": "/srv/repo/a.py"}


def test_side_requests_are_answered_without_using_replies() -> None:
    with ScriptedModelServer(script({"text": "first"}, {"text": "second"})) as server:
        counted = call(server, request_body(user("Count")), "/v1/messages/count_tokens?beta=true")
        hello = call(server, None, "/api/hello")
        title = call(server, request_body(user("Name this session"), tools=False))
        main = call(server, request_body(user("Fix")))
    assert json.loads(counted.body) == {"input_tokens": 100}
    assert hello.status == 200
    assert sse_message(title.body)["content"] == [{"type": "text", "text": ""}]
    assert sse_message(main.body)["content"] == [{"type": "text", "text": "first"}]
    assert [record.main for record in server.requests] == [False, False, False, True]


def test_a_finished_script_ends_the_turn() -> None:
    with ScriptedModelServer(script({"text": "only"})) as server:
        call(server, request_body(user("Fix")))
        message = sse_message(
            call(server, request_body(user("Fix"), assistant("only"), user("More"))).body
        )
        assert server.exhausted
        assert server.unmatched == []  # nothing was left to match: not a mismatch
    assert message["content"] == [{"type": "text", "text": ScriptedModelServer.FINISHED_TEXT}]
    assert message["stop_reason"] == "end_turn"


def test_a_request_no_reply_left_matches_is_recorded_and_the_answer_says_why() -> None:
    """Replies left, none matching: the server lists it and the model's answer names the
    reply it expected and what came, instead of a quiet end of the script."""
    waiting = script(
        {"text": "first"},
        {"when": "user", "contains": "marker_missing", "text": "fixed"},
    )
    feedback = "Stop hook feedback:\nThe gate found claimed_not_changed: app.py"
    with ScriptedModelServer(waiting) as server:
        call(server, request_body(user("Fix")))
        answer = call(server, request_body(user("Fix"), assistant("first"), user(feedback)))
        unmatched = server.unmatched
        last_record = server.requests[-1]
        assert not server.exhausted
    assert len(unmatched) == 1
    assert unmatched[0].reply == 2
    assert unmatched[0].came == "user"
    assert unmatched[0].expected == "when: user, contains: 'marker_missing'"
    assert unmatched[0].text == " ".join(feedback.split())
    assert last_record.unmatched == unmatched[0] and last_record.reply is None
    text = sse_message(answer.body)["content"][0]["text"]
    assert text.startswith(ScriptedModelServer.UNMATCHED_PREFIX)
    assert "script reply 2 (when: user, contains: 'marker_missing')" in text
    assert "claimed_not_changed: app.py" in text
    assert sse_message(answer.body)["stop_reason"] == "end_turn"


def test_fail_all_fails_every_request_until_cleared() -> None:
    outage = HttpFault(status=529, retry_after=2, message="down")
    with ScriptedModelServer(script({"text": "back"}), fail_all=outage) as server:
        answers = [
            call(server, request_body(user("Fix"))),
            call(server, request_body(user("Count")), "/v1/messages/count_tokens"),
            call(server, None, "/api/hello"),
        ]
        server.fail_all = None
        recovered = sse_message(call(server, request_body(user("Fix"))).body)
    assert {(a.status, a.headers["retry-after"]) for a in answers} == {(529, "2")}
    assert json.loads(answers[0].body) == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "down"},
    }
    assert recovered["content"] == [{"type": "text", "text": "back"}]


@pytest.mark.parametrize(
    ("status", "kind"), [(429, "rate_limit_error"), (500, "api_error"), (503, "api_error")]
)
def test_scripted_errors_carry_the_api_error_type(status: int, kind: str) -> None:
    with ScriptedModelServer(script({"error": {"status": status}}, {"text": "ok"})) as server:
        failed = call(server, request_body(user("Fix")))
        retried = call(server, request_body(user("Fix")))
    assert failed.status == status
    assert "retry-after" not in failed.headers
    assert json.loads(failed.body)["error"]["type"] == kind
    assert retried.status == 200
    assert server.user_texts() == ["Fix"]  # a retry is the same instruction


def test_user_texts_lists_each_new_instruction_once() -> None:
    first = [user("Fix"), assistant("Done")]
    with ScriptedModelServer(script({"text": "a"})) as server:
        call(server, request_body(user("Fix")))
        call(server, request_body(*first, user("feedback")))
        call(server, request_body(*first, user("feedback")))  # a retry
        call(server, request_body(*first, user("feedback"), assistant("x"), user("feedback")))
    assert server.user_texts() == ["Fix", "feedback", "feedback"]


def test_close_releases_a_hanging_request_promptly() -> None:
    server = ScriptedModelServer(script({"hang": True})).start()
    failures: list[BaseException] = []

    def ask() -> None:
        try:
            call(server, request_body(user("Fix")))
        except (OSError, http.client.HTTPException) as error:
            failures.append(error)

    client = threading.Thread(target=ask)
    client.start()
    deadline = time.monotonic() + 60  # guards a hang only: generous under load
    while not server.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.requests[0].status is None  # held, not answered
    closer = threading.Thread(target=server.close)
    closer.start()
    closer.join(timeout=60)
    client.join(timeout=60)
    assert not closer.is_alive()
    assert not client.is_alive()
    assert len(failures) == 1  # the client saw the connection close without an answer
    server.close()  # closing twice is harmless


def test_a_delayed_reply_is_held_while_another_session_s_request_is_answered() -> None:
    """Parallel sessions share one server: a slow answer holds only its own request, and
    close() releases it at once."""
    server = ScriptedModelServer(
        script(
            {"contains": "backend", "text": "Backend done.", "delay": 600},
            {"contains": "frontend", "text": "Frontend done."},
        )
    ).start()
    answers: list[HttpAnswer] = []
    failures: list[BaseException] = []

    def ask_backend() -> None:
        try:
            answers.append(call(server, request_body(user("Stage backend"), stream=False)))
        except (OSError, http.client.HTTPException) as error:
            failures.append(error)

    slow = threading.Thread(target=ask_backend)
    slow.start()
    deadline = time.monotonic() + 60  # guards a hang only: generous under load
    while not server.requests and time.monotonic() < deadline:
        time.sleep(0.01)

    fast = call(server, request_body(user("Stage frontend"), stream=False))

    assert fast.status == 200
    assert json.loads(fast.body)["content"][0]["text"] == "Frontend done."
    assert slow.is_alive() and not answers  # the backend's answer is still held
    closer = threading.Thread(target=server.close)
    closer.start()
    closer.join(timeout=60)
    slow.join(timeout=60)
    assert not closer.is_alive() and not slow.is_alive()
    assert not answers and len(failures) == 1  # released by close, unanswered


def test_a_delayed_reply_is_answered_once_its_delay_has_passed() -> None:
    """The answer is the reply's, as without a delay; so is a delayed HTTP fault."""
    server = ScriptedModelServer(
        script(
            {"text": "Thought about it.", "delay": 0.05},
            {"error": {"status": 529}, "delay": 0.05},
        )
    )
    with server:
        answer = call(server, request_body(user("Fix"), stream=False))
        fault = call(server, request_body(user("Fix"), assistant("x"), user("more"), stream=False))

    assert answer.status == 200
    assert json.loads(answer.body)["content"][0]["text"] == "Thought about it."
    assert fault.status == 529
    assert [record.reply.delay for record in server.requests if record.reply] == [0.05, 0.05]


def test_env_points_the_cli_at_the_server_offline(tmp_path: Path) -> None:
    with ScriptedModelServer(script({"text": "x"})) as server:
        env = server.env(home=tmp_path, max_retries=2, timeout_ms=5000)
        default_home = Path(server.env()["HOME"])
        assert default_home.is_dir()
    assert not default_home.exists()  # removed on close
    assert env["ANTHROPIC_BASE_URL"] == server.base_url
    assert env["HOME"] == str(tmp_path)
    assert env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert (env["CLAUDE_CODE_MAX_RETRIES"], env["API_TIMEOUT_MS"]) == ("2", "5000")
    assert env["CLAUDE_CODE_USE_BEDROCK"] == ""


GRADER_PROMPT = f"{GRADER_OPENING} You judge whether finished work meets each criterion."
VERDICT = {"verdicts": [{"id": "c1", "verdict": "met", "reason": "NOTES.md says so."}]}


def test_a_grader_request_takes_the_grader_reply_and_the_main_one_the_main_reply() -> None:
    """The grader's conversation is told apart by its opening, however the CLI wraps it;
    the grader reply written first in the script is not the main conversation's."""
    graded = script({"grader": True, "tools": [{"StructuredOutput": VERDICT}]}, {"text": "main"})
    wrapped = f"<system-reminder>\nContext.\n</system-reminder>\n{GRADER_PROMPT}"
    with ScriptedModelServer(graded) as server:
        main = sse_message(call(server, request_body(user("Fix"))).body)
        grader = sse_message(call(server, request_body(user(wrapped))).body)
        records = server.requests

    assert main["content"] == [{"type": "text", "text": "main"}]
    (verdict,) = grader["content"]
    assert (verdict["type"], verdict["name"], verdict["input"]) == (
        "tool_use", "StructuredOutput", VERDICT
    )  # fmt: skip
    assert [(r.main, r.grader, r.agent) for r in records] == [
        (True, False, None), (False, True, None)
    ]  # fmt: skip
    assert server.grader_requests() == [records[1]] and server.main_requests() == [records[0]]
    assert records[1].reply == graded.replies[0] and server.exhausted


def test_a_grader_request_quoting_a_subagent_prompt_is_still_the_graders() -> None:
    """The grader's evidence may quote an Agent call the main agent made: its opening, not
    the quote, says whose conversation it is."""
    delegate = {"description": "fix app.py", "prompt": "Replace the eval in app.py."}
    graded = script(
        {"tools": [{"Agent": {**delegate, "subagent_type": "general-purpose"}}]},
        {"grader": True, "text": "graded"},
    )
    quoting = f"{GRADER_PROMPT}\n<<<DATA-x said>>>\nReplace the eval in app.py.\n<<<END-x>>>"
    with ScriptedModelServer(graded) as server:
        call(server, request_body(user("Fix")))
        answer = sse_message(call(server, request_body(user(quoting))).body)
        (record,) = server.grader_requests()

    assert answer["content"] == [{"type": "text", "text": "graded"}]
    assert (record.agent, record.main) == (None, False)


def test_a_grader_request_with_no_grader_reply_left_is_unmatched_and_answered_so() -> None:
    """As a subagent's with no reply: listed in ``unmatched`` and said in the answer,
    never answered with the main conversation's reply."""
    graded = script({"grader": True, "text": "first verdict"}, {"text": "main"})
    with ScriptedModelServer(graded) as server:
        call(server, request_body(user(GRADER_PROMPT)))
        answer = sse_message(call(server, request_body(user(GRADER_PROMPT))).body)
        (unmatched,) = server.unmatched
        second = server.grader_requests()[1]
        assert not server.exhausted  # the main reply is still there

    assert (unmatched.grader, unmatched.reply) == (True, 0)
    assert second.unmatched == unmatched and second.reply is None
    text = answer["content"][0]["text"]
    assert text.startswith(ScriptedModelServer.UNMATCHED_PREFIX)
    assert "no script reply is left for the grader's conversation" in text


def test_the_plugin_fixtures_are_registered(
    pytestconfig: pytest.Config, scripted_model_server: ScriptedServerFactory, tmp_path: Path
) -> None:
    assert pytestconfig.pluginmanager.has_plugin("phasegate")
    file = tmp_path / "script.yaml"
    file.write_text("replies:\n  - text: from a file\n")
    server = scripted_model_server(file)
    message = sse_message(call(server, request_body(user("Fix"))).body)
    assert message["content"] == [{"type": "text", "text": "from a file"}]


# -- the real CLI ------------------------------------------------------------------------------


@dataclass
class CliRun:
    """What one run of the CLI printed, in stream-json."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def messages(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]

    @property
    def result(self) -> dict[str, Any]:
        (result,) = [m for m in self.messages if m["type"] == "result"]
        return result


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A tiny project to work on."""
    work = tmp_path / "project"
    work.mkdir()
    (work / "app.py").write_text(APP)
    return work


def run_cli(
    cli: Path,
    server: ScriptedModelServer,
    work: Path,
    *args: str,
    prompt: str = "Fix the bug in app.py",
    max_retries: int = 0,
    timeout_ms: int = 30_000,
) -> CliRun:
    """Run ``claude -p`` in ``work`` against ``server``, isolated from the user's setup."""
    home = work.parent / "home"
    env = {
        "PATH": os.environ.get("PATH", ""),
        **server.env(home=home, max_retries=max_retries, timeout_ms=timeout_ms),
    }
    command = [str(cli), "-p", prompt, "--output-format", "stream-json", "--verbose"]
    command += ["--permission-mode", "acceptEdits", "--setting-sources", "", *args]
    done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=60)
    return CliRun(done.returncode, done.stdout, done.stderr)


def check_transcript(name: str, run: CliRun, work: Path, server: ScriptedModelServer) -> None:
    """Compare the run's shape with a saved transcript (or save it, with the update variable)."""
    text = run.stdout
    home = work.parent / "home"
    text = text.replace(str(home), "/home/user").replace(str(work), "/work/project")
    text = text.replace(re.sub(r"[^A-Za-z0-9]", "-", str(work)), "-work-project")
    text = text.replace(server.base_url.removeprefix("http://"), "127.0.0.1:8080")
    file = TRANSCRIPTS / name
    if os.environ.get("PHASEGATE_UPDATE_TRANSCRIPTS"):
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text)
    assert file.exists(), f"{file} is missing: run with PHASEGATE_UPDATE_TRANSCRIPTS=1"

    def shape(lines: str) -> list[tuple[str, str, list[str]]]:
        out = []
        for line in lines.splitlines():
            message = json.loads(line)
            content = message.get("message", {}).get("content", [])
            blocks = [b["type"] for b in content] if isinstance(content, list) else ["str"]
            out.append((message["type"], message.get("subtype", ""), blocks))
        return out

    assert shape(text) == shape(file.read_text())
    assert str(work) not in file.read_text()


@pytest.mark.cli
def test_a_scripted_edit_changes_the_file_on_disk(
    claude_cli_path: Path, scripted_model_server: ScriptedServerFactory, project: Path
) -> None:
    server = scripted_model_server(
        script(
            {"text": "I will read app.py first.", "tools": [{"Read": {"file_path": "app.py"}}]},
            {
                "tools": [
                    {
                        "Edit": {
                            "file_path": "app.py",
                            "old_string": "eval(x)",
                            "new_string": "int(x)",
                        }
                    }
                ]
            },
            {"when": "tool_result", "text": f"{MARKER}\n\n{SUMMARY}"},
        )
    )
    run = run_cli(claude_cli_path, server, project)

    assert run.returncode == 0, run.stderr
    assert (project / "app.py").read_text() == APP.replace("eval(x)", "int(x)")
    assert run.result["result"] == f"{MARKER}\n\n{SUMMARY}"
    assert [(r.last, r.status) for r in server.requests] == [
        ("start", 200),
        ("tool_result", 200),
        ("tool_result", 200),
    ]
    assert server.exhausted
    check_transcript("edit_then_json.jsonl", run, project, server)


@pytest.mark.cli
def test_two_cli_sessions_are_answered_at_once_while_one_waits_on_a_delay(
    claude_cli_path: Path, scripted_model_server: ScriptedServerFactory, tmp_path: Path
) -> None:
    """The CLI waits for a slow answer (within API_TIMEOUT_MS) and a second CLI session on
    the same server finishes meanwhile: parallel stages need both."""
    server = scripted_model_server(
        script(
            {"contains": "slow one", "text": "Slow done.", "delay": 600},
            {"contains": "quick one", "text": "Quick done."},
        )
    )
    slow_work, quick_work = tmp_path / "slow" / "work", tmp_path / "quick" / "work"
    slow_work.mkdir(parents=True)
    quick_work.mkdir(parents=True)
    env = {"PATH": os.environ.get("PATH", ""), **server.env(home=tmp_path / "slow" / "home")}
    command = [str(claude_cli_path), "-p", "the slow one", "--output-format", "stream-json",
               "--verbose", "--setting-sources", ""]  # fmt: skip
    slow = subprocess.Popen(
        command, cwd=slow_work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 60
        while not server.main_requests() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.main_requests(), "the slow session never asked"

        quick = run_cli(claude_cli_path, server, quick_work, prompt="the quick one")

        assert quick.returncode == 0, quick.stderr
        assert quick.result["result"] == "Quick done."
        assert slow.poll() is None  # still waiting on its delayed answer
    finally:
        slow.kill()
        slow.wait(timeout=60)


@pytest.mark.cli
def test_the_cli_takes_a_delayed_answer_as_any_other(
    claude_cli_path: Path, scripted_model_server: ScriptedServerFactory, project: Path
) -> None:
    """A delay below API_TIMEOUT_MS is a slow model, not a failure: no retry, one request."""
    server = scripted_model_server(script({"text": "Thought it over.", "delay": 1.5}))
    run = run_cli(claude_cli_path, server, project)

    assert run.returncode == 0, run.stderr
    assert run.result["result"] == "Thought it over."
    assert [(r.last, r.status) for r in server.main_requests()] == [("start", 200)]


@pytest.mark.cli
def test_json_without_an_edit_leaves_the_file_alone(
    claude_cli_path: Path, scripted_model_server: ScriptedServerFactory, project: Path
) -> None:
    server = scripted_model_server(script({"text": f"{MARKER}\n\n{SUMMARY}"}))
    run = run_cli(claude_cli_path, server, project)

    assert run.returncode == 0, run.stderr
    assert (project / "app.py").read_text() == APP
    assert run.result["is_error"] is False
    check_transcript("json_without_edit.jsonl", run, project, server)


@pytest.mark.cli
def test_error_tool_results_select_tool_error_replies(
    claude_cli_path: Path, scripted_model_server: ScriptedServerFactory, project: Path
) -> None:
    server = scripted_model_server(
        script(
            {"tools": [{"Edit": {"file_path": "app.py", "old_string": "nope", "new_string": "x"}}]},
            {"when": "tool_result", "text": "skipped: the edit did not succeed"},
            {
                "when": "tool_error",
                "contains": "String to replace not found",
                "tools": [{"MultiEdit": {"file_path": "app.py", "edits": []}}],
            },
            {"when": "tool_error", "contains": "No such tool available", "text": "recovered"},
        )
    )
    run = run_cli(claude_cli_path, server, project)

    assert run.returncode == 0, run.stderr
    assert run.result["result"] == "recovered"
    assert [r.last for r in server.requests] == ["start", "tool_error", "tool_error"]
    assert (project / "app.py").read_text() == APP


@pytest.mark.cli
def test_stop_hook_feedback_reaches_the_model(
    claude_cli_path: Path, scripted_model_server: ScriptedServerFactory, project: Path
) -> None:
    hook = project.parent / "stop_hook.py"
    hook.write_text(
        "import json, sys\n"
        "if not json.load(sys.stdin).get('stop_hook_active'):\n"
        "    print(json.dumps({'decision': 'block', 'reason': 'claimed_not_changed: app.py'}))\n"
    )
    command = f'"{sys.executable}" "{hook}"'
    settings = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": command}]}]}}
    server = scripted_model_server(
        script(
            {"text": MARKER},
            {"when": "user", "contains": "claimed_not_changed", "text": SUMMARY},
        )
    )
    run = run_cli(claude_cli_path, server, project, "--settings", json.dumps(settings))

    assert run.returncode == 0, run.stderr
    assert run.result["result"] == SUMMARY
    assert server.user_texts() == [
        "Fix the bug in app.py",
        "Stop hook feedback:\nclaimed_not_changed: app.py",
    ]
    check_transcript("stop_hook_feedback.jsonl", run, project, server)


@pytest.mark.cli
def test_side_requests_do_not_consume_replies(
    claude_cli_path: Path, scripted_model_server: ScriptedServerFactory, project: Path
) -> None:
    server = scripted_model_server(script({"text": "the first reply"}))
    call(server, request_body(user("Count")), "/v1/messages/count_tokens")
    call(server, request_body(user("Write a title"), tools=False))
    run = run_cli(claude_cli_path, server, project)

    assert run.result["result"] == "the first reply"
    assert [(r.main, r.reply is not None) for r in server.requests] == [
        (False, False),
        (False, False),
        (True, True),
    ]


@pytest.mark.cli
def test_overloaded_once_then_the_scripted_answer(
    claude_cli_path: Path, scripted_model_server: ScriptedServerFactory, project: Path
) -> None:
    server = scripted_model_server(
        script({"error": {"status": 529, "retry_after": 0}}, {"text": "answered on retry"})
    )
    run = run_cli(claude_cli_path, server, project, max_retries=1)

    assert run.returncode == 0, run.stderr
    assert run.result["result"] == "answered on retry"
    assert run.result["is_error"] is False
    assert [r.status for r in server.requests] == [529, 200]
    retries = [m for m in run.messages if m.get("subtype") == "api_retry"]
    assert [(m["attempt"], m["error_status"]) for m in retries] == [(1, 529)]


@pytest.mark.cli
def test_a_persistent_500_fails_the_run_without_using_replies(
    claude_cli_path: Path, scripted_model_server: ScriptedServerFactory, project: Path
) -> None:
    server = scripted_model_server(script({"text": "never said"}), fail_all=HttpFault(status=500))
    run = run_cli(claude_cli_path, server, project)

    assert run.returncode == 1
    result = run.result
    assert (result["subtype"], result["is_error"]) == ("success", True)  # trust is_error
    assert (result["api_error_status"], result["terminal_reason"]) == (500, "api_error")
    synthetic = [m for m in run.messages if m["type"] == "assistant"]
    assert [m["message"]["model"] for m in synthetic] == ["<synthetic>"]
    assert [r.status for r in server.requests] == [500]
    assert not server.exhausted
    check_transcript("api_error_500.jsonl", run, project, server)


@pytest.mark.cli
def test_a_hang_ends_with_the_cli_timeout(claude_cli_path: Path, project: Path) -> None:
    server = ScriptedModelServer(script({"hang": True}, {"text": "too late"})).start()
    try:
        run = run_cli(claude_cli_path, server, project, timeout_ms=1000)
    finally:
        closer = threading.Thread(target=server.close)
        closer.start()
        closer.join(timeout=60)
    assert not closer.is_alive()
    assert run.returncode == 1
    assert (run.result["is_error"], run.result["terminal_reason"]) == (True, "api_error")
    assert "timed out" in run.result["result"]
    assert [r.status for r in server.requests] == [None]


@pytest.mark.cli
def test_the_same_script_gives_the_same_response_bytes(
    claude_cli_path: Path, project: Path
) -> None:
    replies = script(
        {"text": "Reading.", "tools": [{"Read": {"file_path": "app.py"}}]},
        {
            "tools": [
                {"Edit": {"file_path": "app.py", "old_string": "eval(x)", "new_string": "int(x)"}}
            ]
        },
        {"text": MARKER},
    )
    responses = []
    for _ in range(2):
        (project / "app.py").write_text(APP)
        with ScriptedModelServer(replies) as server:
            assert run_cli(claude_cli_path, server, project).returncode == 0
            responses.append([record.response for record in server.requests])
    assert len(responses[0]) == 3
    assert responses[0] == responses[1]


def test_the_bundled_cli_is_found_without_importing_the_sdk() -> None:
    check = (
        "import sys; from phasegate.testing.pytest_plugin import bundled_cli_path; "
        "cli = bundled_cli_path(); "
        "assert cli is not None and cli.parent.name == '_bundled', cli; "
        "assert 'claude_agent_sdk' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", check], check=True, timeout=30)
