"""What a failed Claude Code session stands for, as a phasegate error.

Claude Code reports a failure either as an error *result* (the last message of the stream)
or as an exception of claude-agent-sdk. Each becomes a :class:`~phasegate.errors.UsageError`
(nothing will work until the caller changes something) or an
:class:`~phasegate.errors.AgentError`, ``transient`` when retrying the same request might
succeed. Errors that a setting of :class:`~phasegate.agents.claude.adapter.ClaudeAgent`
would avoid name that keyword argument in ``option``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeGuard

from phasegate.errors import AgentError, UsageError
from phasegate.evidence.transcript import RunResult

TRANSIENT_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
"""HTTP statuses of the model API worth a retry (timeouts, conflicts, rate limits, overload)."""

STRUCTURED_OUTPUT_GAVE_UP = "error_max_structured_output_retries"
"""Result subtype of a session whose structured outputs were all refused: not a failure,
the gate judges what the model gave."""


def api_failure(result: RunResult) -> AgentError:
    """The error an error result stands for (cost cap, API failure, other)."""
    if result.subtype == "error_max_budget_usd" or result.terminal_reason == "budget_exhausted":
        spent = f"${result.usage.cost_usd:.4f}" if result.usage.cost_usd is not None else "it"
        return AgentError(
            f"the run's cost cap was reached ({spent} spent)", option="max_budget_usd"
        )
    status = result.api_error_status
    if status is None and result.terminal_reason != "api_error":
        detail = result.text or result.subtype or "unknown error"
        return AgentError(f"Claude Code ended with an error: {detail}")
    transient = status is None or status in TRANSIENT_STATUSES or status >= 500
    what = f"HTTP {status}" if status is not None else "no answer (timeout or connection failure)"
    return AgentError(
        f"the model API failed: {what}; the CLI's own retries were used up", transient=transient
    )


def is_failure(result: RunResult | None) -> TypeGuard[RunResult]:
    """Whether a session that ended with ``result`` failed (a refused structured output is
    not a failure)."""
    return result is not None and result.is_error and result.subtype != STRUCTURED_OUTPUT_GAVE_UP


def cli_not_found(exc: Exception) -> UsageError:
    """The Claude Code CLI is not where the agent looked for it."""
    return UsageError(
        f"the Claude Code CLI was not found ({exc}); reinstall claude-agent-sdk, which "
        "bundles it, or give the agent the path of a Claude Code CLI",
        option="cli_path",
    )


def plugins_failed(errors: Iterable[Mapping[str, Any]]) -> UsageError:
    """Claude Code could not load plugins the agent was given (the init message's
    ``plugin_errors``): each one's name, failure type, message and path."""
    lines = "; ".join(
        f"{e.get('plugin', '?')} ({e.get('type', 'error')}): {e.get('message', '')}"
        + (f" [{e['path']}]" if e.get("path") else "")
        for e in errors
    )
    return UsageError(
        f"Claude Code could not load the plugin(s) given to the agent: {lines}. Fix the "
        "plugin folder (`claude plugin validate PATH` says what is wrong), or leave it out "
        "of plugins",
        option="plugins",
    )


def sdk_failure(exc: Exception, stderr: Iterable[str]) -> AgentError:
    """claude-agent-sdk failed with no error result to explain it (the CLI crashed, the
    connection dropped): transient, with the last lines the CLI wrote to stderr."""
    lines = list(stderr)
    tail = ("\nCLI stderr (last lines):\n" + "\n".join(lines)) if lines else ""
    return AgentError(f"Claude Code failed: {exc}{tail}", transient=True)


def no_credentials() -> UsageError:
    """Nothing in the CLI's environment lets it reach a model."""
    return UsageError(
        "no credentials for Claude Code: set ANTHROPIC_API_KEY, log in once with "
        "`claude login`, or set ANTHROPIC_BASE_URL to a compatible API"
    )


def session_timed_out(timeout: float) -> AgentError:
    """The session outlived the agent's ``timeout``."""
    return AgentError(
        f"Claude Code did not finish within {timeout:g} s (the agent's timeout); "
        "the session was stopped",
        option="timeout",
    )
