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
its answer. That server is marked ``alwaysLoad``, so the model sees both tools with their
schemas in every request, without searching for them, while Claude Code's tool search stays
on for its own deferred tools: a run sends what a bare ``query()`` with the same prompt sends,
plus these two tools (bench/tokens.py). A request with an
``output_schema`` becomes the SDK's ``output_format``; when the CLI gives up on structured
output after its own retries, the session ends normally and the gate judges what was given.

A run whose CLI is outside the window of Claude Code releases phasegate is tested with
(:mod:`~phasegate.agents.claude.window`) goes on, with one
:class:`~phasegate.errors.ClaudeCodeVersionWarning` per process and version.

claude_agent_sdk is imported only when a run starts (it costs ~0.6 s), and its exceptions
are translated at this boundary: a missing CLI is a usage error, an API failure or a crash
an :class:`~phasegate.errors.AgentError`. The session itself lives in
:mod:`~phasegate.agents.claude.session`, the translation of failures in
:mod:`~phasegate.agents.claude.failures`, the CLI's options and environment in
:mod:`~phasegate.agents.claude.options`, what lets it reach a model in
:mod:`~phasegate.agents.claude.credentials`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from phasegate.agents.claude.cli import claude_agent_sdk_version, claude_code_version
from phasegate.agents.claude.credentials import has_credentials
from phasegate.agents.claude.failures import no_credentials, session_timed_out
from phasegate.agents.claude.options import SessionOptions, cli_env
from phasegate.agents.claude.session import ClaudeSession
from phasegate.agents.claude.window import warn_outside_window
from phasegate.agents.protocol import AgentObserver, AgentRequest
from phasegate.errors import UsageError

if TYPE_CHECKING:
    from phasegate.phases.grader import GraderSettings


GRADER_PERMISSION_MODE = "dontAsk"
"""The permission mode of a grader's session: what would need a person's permission (a read
outside the work directory) is refused outright. On 2.1.332 ``acceptEdits`` refused such a
read as well, through a permission request no one answers; this says so by intent instead of
relying on it (tests/agents/test_claude_grader.py holds the refusal)."""


class ClaudeAgent:
    """Runs Claude Code through claude-agent-sdk.

    ``timeout`` bounds the whole session in seconds; ``request_timeout`` one API request
    (the CLI's ``API_TIMEOUT_MS``); ``api_retries`` how often the CLI itself retries a
    failed API request (``CLAUDE_CODE_MAX_RETRIES``). ``isolated=False`` lets the user's
    and the project's Claude Code settings (hooks, plugins, permissions) apply.
    ``plugins``: folders of Claude Code plugins the session loads (``claude --plugin-dir``),
    isolated or not; one Claude Code cannot load fails the run with a
    :class:`~phasegate.errors.UsageError` naming it and why. ``allowed_tools``: Claude Code
    tools the session may call without asking (``claude --allowedTools``), besides
    phasegate's own completion tools; say ``["Workflow"]`` for Claude Code's Workflow tool,
    which ``acceptEdits`` otherwise holds for a review no one answers. phasegate's hooks still
    see every call (a protected path is refused all the same); a grader's session never gets
    them.
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
        plugins: Sequence[str | Path] = (),
        allowed_tools: Sequence[str] = (),
    ) -> None:
        if timeout <= 0 or request_timeout <= 0:
            raise UsageError(
                "timeouts must be positive numbers of seconds",
                option="timeout" if timeout <= 0 else "request_timeout",
            )
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
        self.plugins = tuple(_plugin_folder(path) for path in plugins)
        self.allowed_tools = tuple(allowed_tools)

    def process_env(self, request: AgentRequest) -> dict[str, str]:
        """The environment added to the CLI's, after phasegate's own bounds."""
        return cli_env(
            self.env,
            request,
            api_retries=self.api_retries,
            request_timeout=min(self.request_timeout, self.timeout),
        )

    def version(self) -> str | None:
        """The version of the Claude Code CLI this agent runs (``2.1.332``), None when it
        cannot be told: the bundled CLI's as claude-agent-sdk pins it, or what ``cli_path``
        answers to ``--version`` (asked once per process)."""
        return claude_code_version(self.cli_path)

    def sandbox_problem(self) -> str | None:
        """Why Claude Code's sandbox cannot run here (what to install), or None
        (:func:`~phasegate.agents.claude.sandbox.sandbox_problem`, with the CLI's ``PATH``)."""
        from phasegate.agents.claude.sandbox import sandbox_problem

        return sandbox_problem({**os.environ, **self.env}.get("PATH", os.defpath))

    def grading_agent(self, settings: GraderSettings) -> ClaudeAgent:
        """The agent a grader of this run runs: the same runtime and connection (CLI,
        environment, timeouts, API retries), with the grader's model, turns and cost cap;
        isolated from the user's settings and without this agent's plugins, whatever this
        agent's own choice, so nothing but the grader's request shapes what it may do; in the
        CLI's "don't ask" permission mode, where reading outside the work directory is
        refused (no one is there to allow it)."""
        return ClaudeAgent(
            permission_mode=GRADER_PERMISSION_MODE,
            model=settings.resolved_model,
            cli_path=self.cli_path,
            env=self.env,
            timeout=self.timeout,
            request_timeout=self.request_timeout,
            api_retries=self.api_retries,
            isolated=True,
            max_turns=settings.resolved_turns,
            max_budget_usd=settings.resolved_cost,
        )

    def check_credentials(self, request: AgentRequest) -> None:
        """Fail early (usage error) when the CLI could not reach any model."""
        self._checked_env(request)

    def _checked_env(self, request: AgentRequest) -> dict[str, str]:
        env = self.process_env(request)
        if not has_credentials({**os.environ, **env}):
            raise no_credentials()
        return env

    def _session_options(self, env: dict[str, str]) -> SessionOptions:
        return SessionOptions(
            model=self.model,
            cli_path=self.cli_path,
            permission_mode=self.permission_mode,
            env=env,
            isolated=self.isolated,
            max_turns=self.max_turns,
            max_budget_usd=self.max_budget_usd,
            plugins=tuple(str(path) for path in self.plugins),
            allowed_tools=self.allowed_tools,
        )

    async def run(self, request: AgentRequest, observer: AgentObserver) -> None:
        """Run one Claude Code session; see the module docstring for the hooks."""
        options = self._session_options(self._checked_env(request))
        warn_outside_window(self.version(), claude_agent_sdk_version())
        session = ClaudeSession(options, request, observer)
        try:
            async with asyncio.timeout(self.timeout):
                await session.run()
        except TimeoutError:
            raise session_timed_out(self.timeout) from None


def _plugin_folder(path: str | Path) -> Path:
    """A plugin folder given to the agent, resolved; a path that is not a folder is a usage
    error (Claude Code would only report it once the session started)."""
    folder = Path(path).expanduser().resolve()
    if not folder.is_dir():
        raise UsageError(
            f"plugin {path} is not a folder: give the folder of a Claude Code plugin (the one "
            "holding .claude-plugin/plugin.json, hooks, skills...)",
            option="plugins",
        )
    return folder
