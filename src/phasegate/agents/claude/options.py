"""What a Claude Code session is started with: its environment and claude-agent-sdk's options.

The CLI's environment carries phasegate's own bounds (how often the CLI retries an API
request, how long one request may take, how often a Stop hook may block in a row). Tool
search stays as the CLI has it: the completion tools' MCP server is marked ``alwaysLoad``
(:func:`completion_tool_server`), so the model sees those two tools with their schemas up
front while Claude Code's own rarely used tools stay deferred behind its tool search, as
they are for any ``query()``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phasegate.agents.claude.sandbox import sandbox_env, sandbox_settings
from phasegate.agents.protocol import AgentRequest
from phasegate.phases.completion import full_tool_name


@dataclass(frozen=True, kw_only=True)
class SessionOptions:
    """The agent's settings one session starts with (the request brings the rest)."""

    model: str | None
    cli_path: Path | None
    permission_mode: str
    env: dict[str, str]
    """The CLI's environment on top of the process's (see :func:`cli_env`)."""
    isolated: bool
    max_turns: int | None
    max_budget_usd: float | None
    plugins: tuple[str, ...] = ()
    """Claude Code plugin folders the session loads (claude-agent-sdk's local plugins)."""
    allowed_tools: tuple[str, ...] = ()
    """Tools the session may call without asking, besides the request's completion tools."""


BLOCK_CAP_VAR = "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"
"""How many Stop-hook blocks in a row Claude Code obeys before it ends the turn anyway."""
DEFAULT_BLOCK_CAP = 9
"""Claude Code's own cap (2.1.330 and 2.1.332): a tenth block in a row ends the turn."""
BLOCK_CAP_SLACK = 5
"""Added to the run's budget: the CLI counts blocks in a row without tool use, phasegate
counts its checks, and the two must never disagree in the CLI's favour."""


def cli_env(
    base: Mapping[str, str], request: AgentRequest, *, api_retries: int, request_timeout: float
) -> dict[str, str]:
    """The environment added to the CLI's: ``base``, the request's, then phasegate's bounds.

    The Stop-hook block cap is raised to the request's ``stop_blocks`` (with slack), never
    lowered below the CLI's default or a larger cap the caller set.
    """
    env = {
        **base,
        **request.env,
        "CLAUDE_CODE_MAX_RETRIES": str(api_retries),
        "API_TIMEOUT_MS": str(int(request_timeout * 1000)),
    }
    if request.stop_blocks is not None:
        given = env.get(BLOCK_CAP_VAR, "")
        floor = int(given) if given.isdigit() else DEFAULT_BLOCK_CAP
        env[BLOCK_CAP_VAR] = str(max(floor, request.stop_blocks + BLOCK_CAP_SLACK))
    return env


ALWAYS_LOAD = "alwaysLoad"
"""The MCP server setting (Claude Code 2.1.330 and 2.1.332) that sends all of a server's
tools with every request, never deferred behind tool search (``defer_loading: false``)."""


def completion_tool_server(server: Mapping[str, Any]) -> dict[str, Any]:
    """The completion tools' SDK MCP server config (``create_sdk_mcp_server``'s), loaded up
    front.

    The model is told to call ``phase_complete`` and ``submit_summary``, so it must see
    their schemas without searching. ``ENABLE_TOOL_SEARCH=false`` did that by turning tool
    search off for the whole session, which also sent Claude Code's eleven deferred built-in
    tools (Monitor, SendMessage, CronCreate, ...: ~30k characters) with every request and
    made a run send 1.68x what a bare ``query()`` sends; ``alwaysLoad`` exempts this server
    only (1.03x, bench/tokens.py). claude-agent-sdk passes every key of an SDK server's
    config but its instance to the CLI.
    """
    return {**server, ALWAYS_LOAD: True}


def query_options(
    sdk: Any,
    options: SessionOptions,
    request: AgentRequest,
    *,
    hooks: dict[str, list[Any]],
    mcp_servers: dict[str, Any],
    stderr: Callable[[str], None],
) -> Any:
    """claude-agent-sdk's ``ClaudeAgentOptions`` for one ``query()``.

    An isolated session loads none of the user's or the project's settings; a request with
    an ``output_schema`` asks for structured output; the request's ``toolset`` is the CLI's
    tools (a read-only task's: the reading tools); a read-only request runs in plan mode, where
    the CLI itself refuses writes and commands; a confined request runs its commands in the
    CLI's sandbox (:mod:`~phasegate.agents.claude.sandbox`); the agent's plugin folders are
    loaded (an isolated session too: they were asked for by name).
    """
    return sdk.ClaudeAgentOptions(
        cwd=str(request.workdir),
        permission_mode="plan" if request.read_only else options.permission_mode,
        tools=list(request.toolset) if request.toolset is not None else None,
        model=options.model,
        cli_path=str(options.cli_path) if options.cli_path else None,
        env=(
            {**options.env, **sandbox_env(options.env)}
            if request.confinement is not None
            else options.env
        ),
        setting_sources=[] if options.isolated else None,
        max_turns=options.max_turns,
        max_budget_usd=options.max_budget_usd,
        resume=request.resume,
        fork_session=request.fork and request.resume is not None,
        stderr=stderr,
        mcp_servers=mcp_servers,
        allowed_tools=[
            *(full_tool_name(spec.name) for spec in request.tools),
            *options.allowed_tools,
        ],
        output_format=(
            {"type": "json_schema", "schema": request.output_schema}
            if request.output_schema is not None
            else None
        ),
        hooks=hooks,
        sandbox=(
            sandbox_settings(request.confinement, request.workdir)
            if request.confinement is not None
            else None
        ),
        plugins=[{"type": "local", "path": path} for path in options.plugins],
        # Partial messages carry each response's final usage (its message_delta event);
        # the assistant messages repeat the usage of the response's start.
        include_partial_messages=True,
    )
