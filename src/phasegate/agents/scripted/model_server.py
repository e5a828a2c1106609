"""An offline, scripted Anthropic Messages API for running the real Claude Code CLI in tests.

::

    with ScriptedModelServer(load_script("fix.yaml")) as server:
        subprocess.run([cli, "-p", prompt, ...], env={**os.environ, **server.env()}, cwd=work)
        assert "claimed_not_changed" in "\\n".join(server.user_texts())

Each request of the main conversation gets the next matching reply of the script (see
:mod:`phasegate.agents.scripted.script`); side requests get a harmless answer and use no reply. A
subagent's requests (Claude Code's Agent tool) are told apart by their first user message,
which is the ``prompt`` of an Agent call the server sent: they get the replies written for that
subagent (``agent:`` its call's ``description``). A grader's requests (the session that
judges a ``rubric`` check) are told apart by their first user message too, which starts with
:data:`~phasegate.prompts.grader.GRADER_OPENING`: they get the ``grader: true`` replies, one
place in the script shared by every grader session the server answers. A workflow agent's
requests (an ``agent()`` call of a script the server sent in a Workflow call) are told apart by
their first user message too, which starts with
:data:`~phasegate.agents.scripted.script.WORKFLOW_HARNESS` and holds that call's prompt: they
get the replies written for it (``workflow:`` the call's ``label``, read from the script). A
request that no
reply left matches is answered with a text that says so (which reply was expected, what came)
and listed in :attr:`ScriptedModelServer.unmatched`; so is a grader's request once no grader
reply is left.
Replies are streamed as the real API streams them, with deterministic ids and usage, so the
same script always produces the same response bytes.
"""

from __future__ import annotations

import os
import shutil
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from phasegate._files.scratch import make_scratch
from phasegate.agents.scripted import _requests, _wire, _workflow
from phasegate.agents.scripted._http import BackgroundServer, Response
from phasegate.agents.scripted.script import (
    UNMATCHED_PREFIX,
    HttpFault,
    LastInput,
    Reply,
    Script,
    ScriptCursor,
    Unmatched,
    load_script,
)
from phasegate.evidence.stream_json import DELEGATING_TOOLS
from phasegate.prompts.grader import GRADER_OPENING
from phasegate.validators.paths import PATH_KEYS

if TYPE_CHECKING:
    from phasegate.agents.claude.adapter import ClaudeAgent

__all__ = ["RecordedRequest", "ScriptedModelServer"]

# Only the runtime's file tools take paths; a summary's "path" field stays as written.
HOME_SCRATCH = "phasegate-home"
"""The prefix of the temporary ``HOME`` a server gives the CLI when given none."""

WORKFLOW_TOOL = "Workflow"
"""Claude Code's tool that runs a workflow script (2.1.332)."""

_FILE_TOOLS = frozenset(
    {"Read", "Edit", "MultiEdit", "Write", "NotebookEdit", "Glob", "Grep", "LS"}
)


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received, and what it answered."""

    method: str
    path: str
    body: dict[str, Any] | None = field(repr=False)
    main: bool
    """True for a turn of the main conversation (not a subagent's, not a grader's)."""
    last: LastInput | None
    """What the latest message holds (None for a side request)."""
    last_text: str
    """The latest message's text without ``<system-reminder>`` blocks, or tool results' text."""
    reply: Reply | None
    """The script reply used, or None (side request, ``fail_all``, script finished, or no
    reply left matched: see ``unmatched``)."""
    status: int | None
    """The HTTP status answered; None when the request was held unanswered (``hang``)."""
    response: bytes = field(repr=False)
    unmatched: Unmatched | None = None
    """Set when replies were left but none matched this request (or the script has none for
    its subagent, or none left for the grader)."""
    agent: str | None = None
    """For a subagent's turn, the ``description`` of the Agent call that started it (such
    turns use the replies written for it and are not ``main``)."""
    grader: bool = False
    """True for a grader's turn (its first user message starts with ``GRADER_OPENING``): it
    uses the ``grader: true`` replies and is not ``main``."""
    workflow: str | None = None
    """For a workflow agent's turn (Claude Code's Workflow tool), the ``label`` of the
    ``agent()`` call that started it, read from the script the server sent (its task text when
    the call could not be read): such turns use the ``workflow:`` replies and are not
    ``main``."""


class ScriptedModelServer:
    """A fake Anthropic API on ``127.0.0.1`` that replays a script; use it as a context manager.

    ``fail_all`` answers every request with that HTTP error instead, without using replies
    (a persistent outage); it can also be set or cleared while the server runs.
    """

    FINISHED_TEXT = "(script finished)"
    """What the model says once no reply is left: a plain end of turn, so the CLI stops."""

    UNMATCHED_PREFIX = UNMATCHED_PREFIX
    """How the model's answer starts when replies are left but none matches the request."""

    def __init__(self, script: Script | str | Path, *, fail_all: HttpFault | None = None) -> None:
        self.script = script if isinstance(script, Script) else load_script(script)
        self.fail_all = fail_all
        self._cursor = ScriptCursor(self.script)
        self._lock = threading.Lock()
        self._records: list[RecordedRequest] = []
        self._counters = {"main": 0, "side": 0, "tool": 0}
        self._delegated: list[tuple[str, str]] = []
        """(prompt, description) of every Agent (Task) call the server sent, oldest first."""
        self._workflow_agents: list[tuple[str, str]] = []
        """(prompt, label) of every readable agent() call of the Workflow scripts it sent."""
        self._http: BackgroundServer | None = None
        self._home: str | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> Self:
        """Listen on a free port of 127.0.0.1 and serve from a background thread."""
        if self._http is not None:
            raise RuntimeError("the server is already started")
        self._http = BackgroundServer(self._answer)
        return self

    def close(self) -> None:
        """Stop serving, release held (``hang``) requests and drop every open connection."""
        if self._http is not None:
            self._http.close()
        if self._home is not None:
            shutil.rmtree(self._home, ignore_errors=True)
            self._home = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # -- what tests use ----------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The port the server listens on."""
        if self._http is None:
            raise RuntimeError("the server is not started")
        return self._http.port

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``, the value for ``ANTHROPIC_BASE_URL``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in arrival order."""
        with self._lock:
            return list(self._records)

    @property
    def exhausted(self) -> bool:
        """True when every reply of the script has been used or skipped."""
        with self._lock:
            return self._cursor.exhausted

    @property
    def unmatched(self) -> list[Unmatched]:
        """Every request that replies were left for but none matched, in order; with a
        subagent's for which the script has no reply and a grader's with no grader reply
        left."""
        with self._lock:
            return list(self._cursor.unmatched)

    def main_requests(self) -> list[RecordedRequest]:
        """The requests of the main conversation, in arrival order."""
        return [record for record in self.requests if record.main]

    def subagent_requests(self, agent: str | None = None) -> list[RecordedRequest]:
        """The requests of subagents' conversations (of ``agent`` only, when given)."""
        return [
            record
            for record in self.requests
            if record.agent is not None and agent in (None, record.agent)
        ]

    def workflow_requests(self, label: str | None = None) -> list[RecordedRequest]:
        """The requests of workflow agents' conversations (of the agent labelled ``label``
        only, when given), in arrival order."""
        return [
            record
            for record in self.requests
            if record.workflow is not None and label in (None, record.workflow)
        ]

    def grader_requests(self) -> list[RecordedRequest]:
        """The requests of grader sessions' conversations, in arrival order."""
        return [record for record in self.requests if record.grader]

    def user_texts(self) -> list[str]:
        """The text of each user instruction the model received: the first prompt, then each
        new instruction (a Stop hook's reason, gate feedback, a next-stage prompt).

        A retried request repeats its instruction; it is listed once.
        """
        texts: list[str] = []
        previous: tuple[int, str] | None = None
        for record in self.main_requests():
            # A retry repeats the request just before it: same conversation length and text.
            key = (len((record.body or {}).get("messages") or ()), record.last_text)
            if record.last in ("start", "user") and key != previous:
                texts.append(record.last_text)
            previous = key
        return texts

    def claude_agent(self, **options: Any) -> ClaudeAgent:
        """Claude Code pointed at this server (:meth:`env`), without the CLI's own API retries
        and with short timeouts (120 s a session, 30 s a request), unless ``options`` say."""
        from phasegate.agents.claude.adapter import ClaudeAgent

        defaults: dict[str, Any] = {"timeout": 120, "request_timeout": 30, "api_retries": 0}
        return ClaudeAgent(env=self.env(), **(defaults | options))

    def env(
        self, home: str | Path | None = None, *, max_retries: int = 0, timeout_ms: int = 60_000
    ) -> dict[str, str]:
        """Environment variables that point the Claude Code CLI at this server, offline.

        Merge them over ``os.environ``. ``home`` becomes ``HOME`` (default: a temporary
        directory removed on close), so user settings, sessions and credentials stay out.
        ``max_retries`` and ``timeout_ms`` bound the CLI's own retry loop, which otherwise
        makes 10 attempts with backoff for 5xx/429/529 and waits 600 s for a silent server.
        """
        if home is None:
            if self._home is None:
                self._home = str(make_scratch(HOME_SCRATCH))
            home = self._home
        blank = dict.fromkeys(_ELSEWHERE, "")
        return blank | {
            "ANTHROPIC_BASE_URL": self.base_url,
            "ANTHROPIC_API_KEY": "phasegate-offline",
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(Path(home) / ".claude"),
            # Without it the CLI also calls GET /api/hello, telemetry and update checks.
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "CLAUDE_CODE_MAX_RETRIES": str(max_retries),
            "API_TIMEOUT_MS": str(timeout_ms),
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }

    # -- answering ---------------------------------------------------------------------------

    def _answer(self, method: str, path: str, body: dict[str, Any] | None) -> Response | None:
        """Decide and record the response to one request; None means: hold it unanswered."""
        classified = _requests.main_turn(method, path, body)
        last, last_text = classified if classified is not None else (None, "")
        reply: Reply | None = None
        unmatched: Unmatched | None = None
        agent: str | None = None
        workflow: str | None = None
        grader = False
        with self._lock:
            if classified is not None and body is not None:
                # The grader first: its prompt quotes the agent's words as evidence, and they
                # may hold an Agent call's prompt. A workflow agent's opening is the harness's.
                first = _requests.first_user_text(body)
                grader = first.startswith(GRADER_OPENING)
                workflow = None if grader else self._workflow_of(first)
                agent = None if grader or workflow is not None else self._subagent_of(body)
            if self.fail_all is not None:
                response: Response | None = _fault(self.fail_all)
            elif body is not None and last is not None:
                seen = len(self._cursor.unmatched)
                branch = _requests.branch_of(_requests.workdir(body))
                reply = self._cursor.next_reply(
                    last, last_text, agent=agent, branch=branch, grader=grader, workflow=workflow
                )
                if len(self._cursor.unmatched) > seen:
                    unmatched = self._cursor.unmatched[-1]
                response = self._main_response(reply, body, unmatched)
            else:
                response = self._side_response(method, path, body)
            self._records.append(
                RecordedRequest(
                    method=method,
                    path=path,
                    body=body,
                    main=(
                        classified is not None and agent is None and workflow is None and not grader
                    ),
                    agent=agent,
                    grader=grader,
                    workflow=workflow,
                    last=last,
                    last_text=last_text,
                    reply=reply,
                    status=None if response is None else response.status,
                    response=b"" if response is None else response.body,
                    unmatched=unmatched,
                )
            )
        return response

    def _subagent_of(self, body: dict[str, Any]) -> str | None:
        """The ``description`` of the Agent call whose subagent sent ``body``: its first user
        message is that call's prompt (the latest such call, if several share a prompt)."""
        first = _requests.first_user_text(body)
        for prompt, description in reversed(self._delegated):
            if prompt and prompt in first:
                return description
        return None

    def _workflow_of(self, first: str) -> str | None:
        """The label of the ``agent()`` call whose workflow agent opened its conversation with
        ``first`` (the latest such call, if several share a prompt); its task text when no
        call the server sent reads that way; None for a conversation no workflow started."""
        task = _workflow.task_text(first)
        if task is None:
            return None
        for prompt, label in reversed(self._workflow_agents):
            if _workflow.same_task(prompt, task):
                return label
        return task

    def _main_response(
        self, reply: Reply | None, body: dict[str, Any], unmatched: Unmatched | None
    ) -> Response | None:
        if reply is not None and reply.hang:
            return None
        if reply is not None and reply.error is not None:
            return replace(_fault(reply.error), delay=reply.delay)
        blocks: list[dict[str, Any]] = []
        if reply is None or reply.text is not None or not reply.tools:
            if unmatched is not None:
                text = f"{self.UNMATCHED_PREFIX} {unmatched.describe()}"
            else:
                text = self.FINISHED_TEXT if reply is None else (reply.text or "")
            blocks.append({"type": "text", "text": text})
        workdir = _requests.workdir(body)
        for step in reply.tools if reply is not None else ():
            self._counters["tool"] += 1
            if step.tool in DELEGATING_TOOLS:
                prompt, description = step.input.get("prompt"), step.input.get("description")
                if isinstance(prompt, str) and isinstance(description, str):
                    self._delegated.append((prompt.strip(), description))
            elif step.tool == WORKFLOW_TOOL and isinstance(step.input.get("script"), str):
                self._workflow_agents += _workflow.agent_calls(step.input["script"])
            blocks.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_scripted_{self._counters['tool']:04d}",
                    "name": step.tool,
                    "input": _absolute(step.input, workdir)
                    if step.tool in _FILE_TOOLS
                    else dict(step.input),
                }
            )
        self._counters["main"] += 1
        stop: _wire.StopReason = "tool_use" if reply is not None and reply.tools else "end_turn"
        response = _message_response(
            f"msg_scripted_{self._counters['main']:04d}", body, blocks, stop
        )
        return replace(response, delay=reply.delay) if reply is not None else response

    def _side_response(self, method: str, path: str, body: dict[str, Any] | None) -> Response:
        route = _requests.route(path)
        if method == "POST" and route == "/v1/messages/count_tokens":
            return Response(200, _wire.encode_json({"input_tokens": _wire.INPUT_TOKENS}))
        if method == "POST" and route == "/v1/messages" and body is not None:
            self._counters["side"] += 1
            blocks = [{"type": "text", "text": ""}]
            return _message_response(
                f"msg_side_{self._counters['side']:04d}", body, blocks, "end_turn"
            )
        return Response(200, b"{}")


# Variables that would send the CLI to another provider or credential instead of this server.
_ELSEWHERE = (
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_USE_FOUNDRY",
    "CLAUDE_CODE_USE_GATEWAY",
    "CLAUDE_CODE_USE_MANTLE",
    "CLAUDE_CODE_USE_ANTHROPIC_AWS",
    "CLAUDE_CODE_USE_ANTHROPIC_GOOGLE_CLOUD",
)


def _absolute(arguments: dict[str, Any], workdir: str | None) -> dict[str, Any]:
    """Tool input with relative file paths resolved against the CLI's working directory; a
    path from the home folder (``~/...``) is left as written, for the CLI to expand."""
    resolved = dict(arguments)
    for key in PATH_KEYS:
        value = resolved.get(key)
        if workdir is None or not isinstance(value, str) or value.startswith("~"):
            continue
        if not os.path.isabs(value):
            resolved[key] = os.path.normpath(os.path.join(workdir, value))
    return resolved


def _message_response(
    message_id: str, body: dict[str, Any], blocks: list[dict[str, Any]], stop: _wire.StopReason
) -> Response:
    model = body.get("model")
    if not isinstance(model, str):
        model = "claude-scripted"
    if body.get("stream") is True:
        events = _wire.stream_events(message_id, model, blocks, stop)
        return Response(200, _wire.encode_sse(events), "text/event-stream")
    return Response(200, _wire.encode_json(_wire.message(message_id, model, blocks, stop)))


def _fault(fault: HttpFault) -> Response:
    headers: tuple[tuple[str, str], ...] = ()
    if fault.retry_after is not None:
        headers = (("retry-after", f"{fault.retry_after:g}"),)
    return Response(fault.status, _wire.error_body(fault), headers=headers)
