"""One Claude Code session: one ``query()``, its hooks, its message loop.

Every message the CLI sends becomes transcript entries for the observer. The Stop hook asks
the observer (the runner's gate) whether the model may stop; the PreToolUse hook (only when the
request names tools to check) asks it whether a call may run; the PostToolUseFailure hook
records the calls the CLI itself counts as failed; the completion tools are answered by the observer
while the model waits. Failures become phasegate errors (see
:mod:`~phasegate.agents.claude.failures`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from phasegate.agents.claude.failures import (
    STRUCTURED_OUTPUT_GAVE_UP,
    api_failure,
    cli_not_found,
    is_failure,
    plugins_failed,
    sdk_failure,
)
from phasegate.agents.claude.messages import sdk_message_as_json
from phasegate.agents.claude.options import SessionOptions, completion_tool_server, query_options
from phasegate.agents.protocol import AgentObserver, AgentRequest
from phasegate.errors import UsageError
from phasegate.evidence.stream_json import SYNTHETIC_MODEL, MessageReader
from phasegate.evidence.transcript import (
    AgentRef,
    AssistantText,
    Entry,
    Notice,
    RunResult,
    ToolCall,
    ToolResult,
    UserText,
)
from phasegate.phases.completion import COMPLETION_TOOLS, TOOL_SERVER, full_tool_name

STDERR_LINES = 20
"""Lines of the CLI's stderr kept for the message of a crash."""


class ClaudeSession:
    """One query(): the hooks, the message loop and the translation of failures."""

    def __init__(
        self, options: SessionOptions, request: AgentRequest, observer: AgentObserver
    ) -> None:
        self.options = options
        self.request = request
        self.observer = observer
        self.failed_calls: set[str] = set()
        """Tool-use ids the CLI's PostToolUseFailure hook reported."""
        self.unanswered: list[ToolCall] = []
        """Completion tool calls seen in the message stream and not yet answered."""
        self.last_text: str | None = None
        self.texts = 0
        """Assistant texts (and notices) recorded so far."""
        self.texts_at_stop = 0
        """:attr:`texts` when the latest Stop hook was answered."""
        self.api_failed = False
        """The latest assistant message was the runtime's own API-error message."""
        self.stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self.seen_calls: set[str] = set()
        """Ids of the tool calls the message loop has recorded."""

    async def run(self) -> None:
        """Run the query to its end; raise what a failed session stands for. Cancelled, it
        raises the cancellation only once the CLI is ended and the SDK's streams are closed
        (:func:`next_message`)."""
        sdk = import_sdk()
        hooks = {
            "Stop": [sdk.HookMatcher(hooks=[self._on_stop])],
            # Only failures are hooked: a success hook would cost the CLI a round trip
            # per tool call and tell nothing the message stream does not.
            "PostToolUseFailure": [sdk.HookMatcher(hooks=[self._on_tool_failure])],
        }
        checked = self.request.check_before
        if checked:
            # Only the calls a policy may refuse: each asks the CLI for a round trip. A hook
            # that fails must refuse, not wave the call through (the CLI's default), and must
            # not hold a call for the CLI's default of 600 s.
            hooks["PreToolUse"] = [
                sdk.HookMatcher(
                    matcher=None if checked == "all" else "|".join(checked),
                    hooks=[self._before_tool],
                    timeout=PRE_TOOL_TIMEOUT,
                    on_failure="block",
                )
            ]
        options = query_options(
            sdk,
            self.options,
            self.request,
            hooks=hooks,
            mcp_servers=self._tool_server(sdk),
            stderr=self.stderr.append,
        )
        result: RunResult | None = None
        reader = MessageReader()
        try:
            messages = sdk.query(prompt=self.request.prompt, options=options)
            while (message := await next_message(messages)) is not _ENDED:
                raw = sdk_message_as_json(message)
                if raw is None:
                    continue
                self._retry_notice(raw)
                if raw["type"] == "system" and raw.get("subtype") == "init":
                    errors = raw.get("plugin_errors")
                    if self.options.plugins and errors:
                        # Left to the SDK's finalizer, as before next_message: closed here,
                        # the SDK's close (stdin, then a 5 s grace) let the CLI go on to ask
                        # the model in every try; left, it rarely does (docs/python.md).
                        del messages
                        raise plugins_failed(errors)
                if raw["type"] == "assistant":
                    self.api_failed = raw.get("error") is not None or (
                        raw["message"].get("model") == SYNTHETIC_MODEL
                    )
                for entry in reader.entries(raw):
                    result = entry if isinstance(entry, RunResult) else result
                    self._record(entry)
        except sdk.CLINotFoundError as exc:
            raise cli_not_found(exc) from exc
        except sdk.ClaudeSDKError as exc:
            if result is not None and result.subtype == STRUCTURED_OUTPUT_GAVE_UP:
                return  # the model's answers were all refused: the gate judges them
            if is_failure(result):
                # The SDK raises after yielding an error result; the result says why.
                raise api_failure(result) from exc
            raise sdk_failure(exc, self.stderr) from exc
        if is_failure(result):
            raise api_failure(result)

    def _tool_server(self, sdk: Any) -> dict[str, Any]:
        """The in-process MCP server offering the request's completion tools (or none)."""
        if not self.request.tools:
            return {}
        tools = [
            sdk.tool(spec.name, spec.description, spec.input_schema)(self._tool_handler(spec.name))
            for spec in self.request.tools
        ]
        server = sdk.create_sdk_mcp_server(TOOL_SERVER, tools=tools)
        return {TOOL_SERVER: completion_tool_server(server)}

    def _tool_handler(self, name: str) -> Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]:
        async def handle(arguments: dict[str, Any]) -> dict[str, Any]:
            await self._await_call(full_tool_name(name), arguments)
            answer = await self.observer.on_tool_call(name, arguments)
            return {"content": [{"type": "text", "text": answer.text}], "is_error": not answer.ok}

        return handle

    async def _await_call(self, name: str, arguments: dict[str, Any]) -> None:
        """Let the message loop record the tool call before the runner judges it."""

        def recorded() -> bool:
            match = next(
                (c for c in self.unanswered if c.name == name and c.input == arguments), None
            )
            if match is not None:
                self.unanswered.remove(match)
            return match is not None

        await catch_up(recorded)

    def _record(self, entry: Entry) -> None:
        if isinstance(entry, UserText):
            return  # the runner records the prompts it sends itself
        if isinstance(entry, ToolResult) and entry.tool_use_id in self.failed_calls:
            entry = entry.model_copy(update={"ok": False})
        if isinstance(entry, AssistantText | Notice):
            self.last_text = entry.text
            self.texts += 1
        if isinstance(entry, ToolCall):
            self.seen_calls.add(entry.id)
            if entry.name in COMPLETION_TOOLS:
                self.unanswered.append(entry)
        self.observer.on_entry(entry)

    async def _on_stop(
        self, hook_input: Any, tool_use_id: str | None, context: Any
    ) -> dict[str, Any]:
        last = hook_input.get("last_assistant_message")
        expected = last.strip() if isinstance(last, str) else ""
        since = self.texts_at_stop
        # A text recorded since the previous stop: a model that says the same words twice
        # (a lazy reply repeated after feedback) must not be judged on the first saying.
        await catch_up(
            lambda: (
                not expected
                or (
                    self.texts > since
                    and self.last_text is not None
                    and expected.endswith(self.last_text.strip())
                )
            )
        )
        self.texts_at_stop = self.texts
        if self.api_failed:
            # The CLI stops because the API failed, not because the model is done: let it
            # stop, so the failure surfaces (and is retried) instead of being judged.
            return {}
        feedback = await self.observer.on_stop()
        return {"decision": "block", "reason": feedback} if feedback is not None else {}

    async def _before_tool(
        self, hook_input: Any, tool_use_id: str | None, context: Any
    ) -> dict[str, Any]:
        """Ask the observer whether a call may run, once the call and everything the model
        said before it (a marker in the same reply) are recorded; deny it with its reason."""
        call_id = str(hook_input.get("tool_use_id") or tool_use_id or "")
        await catch_up(lambda: call_id in self.seen_calls)
        arguments = hook_input.get("tool_input")
        call = ToolCall(
            id=call_id,
            name=str(hook_input.get("tool_name") or ""),
            input=arguments if isinstance(arguments, dict) else {},
            # Inside a subagent the hook says which (agent_id, agent_type): one notion of who
            # made a call with the stream's parent_tool_use_id.
            agent=AgentRef.from_hook(hook_input) if isinstance(hook_input, dict) else None,
        )
        reason = self.observer.before_tool(call)
        if reason is None:
            return {}  # never "allow": that would skip the CLI's own permission checks
        # A refused completion tool is never answered: it must not wait among those that are.
        self.unanswered = [c for c in self.unanswered if c.id != call_id]
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }

    async def _on_tool_failure(
        self, hook_input: Any, tool_use_id: str | None, context: Any
    ) -> dict[str, Any]:
        """Record a call the CLI itself counts as failed, whatever its result text says."""
        self.failed_calls.add(str(hook_input.get("tool_use_id", tool_use_id)))
        return {}

    def _retry_notice(self, raw: dict[str, Any]) -> None:
        if raw["type"] == "system" and raw.get("subtype") == "api_retry":
            self.observer.on_retry(
                attempt=int(raw.get("attempt") or 0),
                reason=f"API error {raw.get('error_status') or raw.get('error') or 'unknown'}",
                delay_ms=int(raw.get("retry_delay_ms") or 0),
                source="claude-code",
            )


CLOSE_WAIT = 120.0
"""Seconds a cancelled session waits for the SDK to close its CLI (the SDK bounds its own
close to about 20 s: a grace after stdin ends, then SIGTERM, then SIGKILL); past them the
cancellation goes on without it."""

_ENDED = object()
"""What :func:`next_message` returns once the SDK's messages have ended."""


async def next_message(messages: AsyncIterator[Any]) -> Any:
    """The SDK's next message (:data:`_ENDED` past the last), waited for in a task of its
    own; cancelled, it closes the SDK's query (:func:`_close`) before the cancellation goes
    on.

    The SDK closes the CLI when a cancellation reaches the message it waits for, shielded
    from anyio's cancellation only: another asyncio cancellation while it closes (a run
    cancelled again while its session closes) cut the close short, left the CLI running and
    the SDK's message stream open (a ResourceWarning once collected). Here only the first one
    reaches the SDK.
    """
    step = asyncio.ensure_future(anext(messages, _ENDED))
    try:
        return await asyncio.shield(step)
    except asyncio.CancelledError:
        await _close(messages, step)
        raise


async def _close(messages: AsyncIterator[Any], step: asyncio.Future[Any]) -> None:
    """Cancel ``step`` and wait for it to end, whatever other cancellation comes meanwhile,
    for at most :data:`CLOSE_WAIT` in all."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + CLOSE_WAIT
    while True:
        step.cancel()
        while not step.done() and (left := deadline - loop.time()) > 0:
            with contextlib.suppress(asyncio.CancelledError):  # passed on once it is closed
                await asyncio.wait([step], timeout=left)
        if not step.done() or step.cancelled() or step.exception() is not None:
            return  # closed (or failed) where the SDK waited, or out of time
        if step.result() is _ENDED:
            return
        # A message came in as the cancellation did: wait for the next one, so that the
        # cancellation lands where the SDK waits (a first turn of the loop takes it there).
        step = asyncio.ensure_future(anext(messages, _ENDED))
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(0)


PRE_TOOL_TIMEOUT = 60.0
"""Seconds the CLI waits for the PreToolUse hook; past them it refuses the call."""

CATCH_UP_TURNS = 300
"""Event-loop turns (of 10 ms) a hook waits for the message it concerns: about 3 s."""


async def catch_up(done: Callable[[], bool], turns: int = CATCH_UP_TURNS) -> None:
    """Let the message loop record what the CLI sent before a hook or tool call needs it.

    Hook and MCP callbacks run on the SDK's reader task, ahead of our consumer of the message
    queue, where the message they concern already waits; a few turns of the event loop bring
    it in. Bounded, so a mismatch never blocks the session.
    """
    for _ in range(turns):
        if done():
            return
        await asyncio.sleep(0.01)


def import_sdk() -> Any:
    """claude_agent_sdk, imported on first use (it costs about 0.6 s)."""
    try:
        import claude_agent_sdk
    except ImportError as exc:  # pragma: no cover - it is a runtime dependency
        raise UsageError(
            "claude-agent-sdk is not installed: pip install phasegate (it depends on it)"
        ) from exc
    return claude_agent_sdk
