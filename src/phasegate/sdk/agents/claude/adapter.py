"""ClaudeAgent: Claude Code, through claude-agent-sdk, behind the agent protocol.

One run is one ``query()``: the CLI works in the work directory (permission mode
``acceptEdits`` by default), isolated from the user's own settings, hooks and plugins. Two
kinds of hooks connect it to phasegate:

* **Stop**: when the model tries to stop, the hook asks the runner's gate. Feedback comes
  back as ``{"decision": "block", "reason": feedback}``: the CLI does not stop and receives
  the feedback as its next instruction, in the same session and the same ``query()``.
* **PostToolUse / PostToolUseFailure**: the CLI's own record of each tool call's outcome.
  A tool result counts as a success only if the message stream *and* the hook say so.

The completion tools (``phase_complete``, ``submit_summary``) are served in-process by an SDK
MCP server named ``phasegate``; each call is judged by the runner while the model waits for
its answer. Tool search is turned off (``ENABLE_TOOL_SEARCH=false``) so the model sees them
with their schemas up front instead of behind a deferred-tool lookup. A request with an
``output_schema`` becomes the SDK's ``output_format``; when the CLI gives up on structured
output after its own retries, the session ends normally and the gate judges what was given.

claude_agent_sdk is imported only when a run starts (it costs ~0.6 s), and its exceptions
are translated here: a missing CLI is a usage error, an API failure or a crash an
:class:`~phasegate.errors.AgentError`.
"""

from __future__ import annotations

import asyncio
import os
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from phasegate.errors import AgentError, UsageError
from phasegate.evidence.stream_json import SYNTHETIC_MODEL, entries_from_message
from phasegate.evidence.transcript import (
    AssistantText,
    Entry,
    Notice,
    RunResult,
    ToolCall,
    ToolResult,
    UserText,
)
from phasegate.phases.completion import COMPLETION_TOOLS, TOOL_SERVER, full_tool_name
from phasegate.sdk.agents.claude.messages import sdk_message_as_json
from phasegate.sdk.agents.protocol import AgentObserver, AgentRequest

TRANSIENT_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
STRUCTURED_OUTPUT_GAVE_UP = "error_max_structured_output_retries"
_CREDENTIAL_VARS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY",
)  # fmt: skip


class ClaudeAgent:
    """Runs Claude Code through claude-agent-sdk.

    ``timeout`` bounds the whole session in seconds; ``request_timeout`` one API request
    (the CLI's ``API_TIMEOUT_MS``); ``api_retries`` how often the CLI itself retries a
    failed API request (``CLAUDE_CODE_MAX_RETRIES``). ``isolated=False`` lets the user's
    and the project's Claude Code settings (hooks, plugins, permissions) apply.
    """

    name = "claude"

    def __init__(
        self,
        *,
        model: str | None = None,
        cli_path: str | Path | None = None,
        permission_mode: str = "acceptEdits",
        env: Mapping[str, str] | None = None,
        timeout: float = 1800.0,
        request_timeout: float = 300.0,
        api_retries: int = 2,
        isolated: bool = True,
        max_turns: int | None = None,
        max_budget_usd: float | None = None,
    ) -> None:
        if timeout <= 0 or request_timeout <= 0:
            raise UsageError("timeouts must be positive numbers of seconds")
        self.model = model
        self.cli_path = Path(cli_path) if cli_path is not None else None
        self.permission_mode = permission_mode
        self.env = dict(env or {})
        self.timeout = timeout
        self.request_timeout = request_timeout
        self.api_retries = api_retries
        self.isolated = isolated
        self.max_turns = max_turns
        self.max_budget_usd = max_budget_usd

    def process_env(self, request: AgentRequest) -> dict[str, str]:
        """The environment added to the CLI's, after phasegate's own bounds."""
        return {
            **self.env,
            **request.env,
            "CLAUDE_CODE_MAX_RETRIES": str(self.api_retries),
            "API_TIMEOUT_MS": str(int(min(self.request_timeout, self.timeout) * 1000)),
            **({"ENABLE_TOOL_SEARCH": "false"} if request.tools else {}),
        }

    def check_credentials(self, request: AgentRequest) -> None:
        """Fail early (usage error) when the CLI could not reach any model."""
        merged = {**os.environ, **self.process_env(request)}
        if any(merged.get(name) for name in _CREDENTIAL_VARS):
            return
        home = Path(merged.get("CLAUDE_CONFIG_DIR") or Path(merged.get("HOME", "~")) / ".claude")
        if (home.expanduser() / ".credentials.json").is_file():
            return
        raise UsageError(
            "no credentials for Claude Code: set ANTHROPIC_API_KEY, log in once with "
            "`claude login`, or set ANTHROPIC_BASE_URL to a compatible API "
            "(`phasegate demo` needs none of these)"
        )

    async def run(self, request: AgentRequest, observer: AgentObserver) -> None:
        """Run one Claude Code session; see the module docstring for the hooks."""
        self.check_credentials(request)
        session = _ClaudeSession(self, request, observer)
        try:
            async with asyncio.timeout(self.timeout):
                await session.run()
        except TimeoutError:
            raise AgentError(
                f"Claude Code did not finish within {self.timeout:g} s (--timeout); "
                "the session was stopped"
            ) from None


class _ClaudeSession:
    """One query(): the hooks, the message loop and the translation of failures."""

    def __init__(self, agent: ClaudeAgent, request: AgentRequest, observer: AgentObserver) -> None:
        self.agent = agent
        self.request = request
        self.observer = observer
        self.hook_outcomes: dict[str, bool] = {}
        self.unanswered: list[ToolCall] = []
        """Completion tool calls seen in the message stream and not yet answered."""
        self.last_text: str | None = None
        self.api_failed = False
        """The latest assistant message was the runtime's own API-error message."""
        self.stderr: deque[str] = deque(maxlen=20)

    async def run(self) -> None:
        sdk = _import_sdk()
        options = sdk.ClaudeAgentOptions(
            cwd=str(self.request.workdir),
            permission_mode=self.agent.permission_mode,
            model=self.agent.model,
            cli_path=str(self.agent.cli_path) if self.agent.cli_path else None,
            env=self.agent.process_env(self.request),
            setting_sources=[] if self.agent.isolated else None,
            max_turns=self.agent.max_turns,
            max_budget_usd=self.agent.max_budget_usd,
            resume=self.request.resume,
            stderr=self.stderr.append,
            mcp_servers=self._tool_server(sdk),
            allowed_tools=[full_tool_name(spec.name) for spec in self.request.tools],
            output_format=(
                {"type": "json_schema", "schema": self.request.output_schema}
                if self.request.output_schema is not None
                else None
            ),
            hooks={
                "Stop": [sdk.HookMatcher(hooks=[self._on_stop])],
                "PostToolUse": [sdk.HookMatcher(hooks=[self._tool_outcome_hook(ok=True)])],
                "PostToolUseFailure": [sdk.HookMatcher(hooks=[self._tool_outcome_hook(ok=False)])],
            },
        )
        result: RunResult | None = None
        try:
            async for message in sdk.query(prompt=self.request.prompt, options=options):
                raw = sdk_message_as_json(message)
                if raw is None:
                    continue
                self._retry_notice(raw)
                if raw["type"] == "assistant":
                    self.api_failed = raw.get("error") is not None or (
                        raw["message"].get("model") == SYNTHETIC_MODEL
                    )
                for entry in entries_from_message(raw):
                    result = entry if isinstance(entry, RunResult) else result
                    self._record(entry)
        except sdk.CLINotFoundError as exc:
            raise UsageError(
                f"the Claude Code CLI was not found ({exc}); reinstall claude-agent-sdk, "
                "which bundles it, or pass --cli-path"
            ) from exc
        except sdk.ClaudeSDKError as exc:
            if result is not None and result.subtype == STRUCTURED_OUTPUT_GAVE_UP:
                return  # the model's answers were all refused: the gate judges them
            if result is not None and result.is_error:
                # The SDK raises after yielding an error result; the result says why.
                raise api_failure(result) from exc
            raise AgentError(
                f"Claude Code failed: {exc}{self._stderr_tail()}", transient=True
            ) from exc
        if result is not None and result.is_error and result.subtype != STRUCTURED_OUTPUT_GAVE_UP:
            raise api_failure(result)

    def _tool_server(self, sdk: Any) -> dict[str, Any]:
        """The in-process MCP server offering the request's completion tools (or none)."""
        if not self.request.tools:
            return {}
        tools = [
            sdk.tool(spec.name, spec.description, spec.input_schema)(self._tool_handler(spec.name))
            for spec in self.request.tools
        ]
        return {TOOL_SERVER: sdk.create_sdk_mcp_server(TOOL_SERVER, tools=tools)}

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

        await _catch_up(recorded)

    def _record(self, entry: Entry) -> None:
        if isinstance(entry, UserText):
            return  # the runner records the prompts it sends itself
        if isinstance(entry, ToolResult) and self.hook_outcomes.get(entry.tool_use_id) is False:
            entry = entry.model_copy(update={"ok": False})
        if isinstance(entry, AssistantText | Notice):
            self.last_text = entry.text
        if isinstance(entry, ToolCall) and entry.name in COMPLETION_TOOLS:
            self.unanswered.append(entry)
        self.observer.on_entry(entry)

    async def _on_stop(
        self, hook_input: Any, tool_use_id: str | None, context: Any
    ) -> dict[str, Any]:
        last = hook_input.get("last_assistant_message")
        expected = last.strip() if isinstance(last, str) else ""
        await _catch_up(
            lambda: (
                not expected
                or (self.last_text is not None and expected.endswith(self.last_text.strip()))
            )
        )
        if self.api_failed:
            # The CLI stops because the API failed, not because the model is done: let it
            # stop, so the failure surfaces (and is retried) instead of being judged.
            return {}
        feedback = await self.observer.on_stop()
        return {"decision": "block", "reason": feedback} if feedback is not None else {}

    def _tool_outcome_hook(self, *, ok: bool) -> Callable[..., Awaitable[dict[str, Any]]]:
        """A PostToolUse(Failure) hook recording the CLI's own verdict on a tool call."""

        async def record(hook_input: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
            self.hook_outcomes[str(hook_input.get("tool_use_id", tool_use_id))] = ok
            return {}

        return record

    def _retry_notice(self, raw: dict[str, Any]) -> None:
        if raw["type"] == "system" and raw.get("subtype") == "api_retry":
            self.observer.on_retry(
                attempt=int(raw.get("attempt") or 0),
                reason=f"API error {raw.get('error_status') or raw.get('error') or 'unknown'}",
                delay_ms=int(raw.get("retry_delay_ms") or 0),
                source="claude-code",
            )

    def _stderr_tail(self) -> str:
        return ("\nCLI stderr (last lines):\n" + "\n".join(self.stderr)) if self.stderr else ""


async def _catch_up(done: Callable[[], bool], turns: int = 300) -> None:
    """Let the message loop record what the CLI sent before a hook or tool call needs it.

    Hook and MCP callbacks run on the SDK's reader task, ahead of our consumer of the message
    queue, where the message they concern already waits; a few turns of the event loop bring
    it in. Bounded (about 3 s), so a mismatch never blocks the session.
    """
    for _ in range(turns):
        if done():
            return
        await asyncio.sleep(0.01)


def api_failure(result: RunResult) -> AgentError:
    """The error an error result stands for (cost cap, API failure, other), with its advice."""
    if result.subtype == "error_max_budget_usd" or result.terminal_reason == "budget_exhausted":
        spent = f"${result.usage.cost_usd:.4f}" if result.usage.cost_usd is not None else "it"
        return AgentError(f"the run's cost cap was reached ({spent} spent; --max-cost)")
    status = result.api_error_status
    if status is None and result.terminal_reason != "api_error":
        detail = result.text or result.subtype or "unknown error"
        return AgentError(f"Claude Code ended with an error: {detail}")
    transient = status is None or status in TRANSIENT_STATUSES or status >= 500
    what = f"HTTP {status}" if status is not None else "no answer (timeout or connection failure)"
    return AgentError(
        f"the model API failed: {what}; the CLI's own retries were used up", transient=transient
    )


def _import_sdk() -> Any:
    try:
        import claude_agent_sdk
    except ImportError as exc:  # pragma: no cover - it is a runtime dependency
        raise UsageError(
            "claude-agent-sdk is not installed: pip install phasegate (it depends on it)"
        ) from exc
    return claude_agent_sdk
