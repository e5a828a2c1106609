"""Retrying an agent session after a transient failure.

Two layers retry, with separate counts in the report:

* the Claude Code CLI retries a failed API request itself (429, 529, 5xx; it honours
  ``retry-after``), as often as ``ClaudeAgent(api_retries=...)`` allows. Each of those
  arrives as a ``retry.scheduled`` event with ``source: "claude-code"``;
* when a session still fails with a transient error (the CLI's retries ran out, the CLI
  crashed, the connection dropped), phasegate starts the session again, resuming it where
  the agent supports that, with exponential backoff and jitter, bounded in count and total
  time. Those are ``retry.scheduled`` events with ``source: "phasegate"``.

Anything else (bad credentials, a timeout of the whole run, a usage error) fails at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    stop_after_delay,
    wait_exponential_jitter,
)

from phasegate.errors import AgentError


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """Bounds for retrying transient failures (see the module docstring)."""

    session_retries: int = 2
    """Times phasegate restarts a session after a transient failure."""
    initial_delay: float = 1.0
    max_delay: float = 30.0
    max_total: float = 300.0
    """Seconds after the first failure beyond which no session is restarted."""

    def retrying(
        self,
        before_sleep: Callable[[RetryCallState], None],
        wanted: Callable[[], bool] = lambda: True,
    ) -> AsyncRetrying:
        """A tenacity controller that retries only transient :class:`AgentError` s, and only
        while ``wanted()`` says another session would serve the run."""
        return AsyncRetrying(
            retry=retry_if_exception(lambda exc: is_transient(exc) and wanted()),
            stop=stop_after_attempt(self.session_retries + 1) | stop_after_delay(self.max_total),
            wait=wait_exponential_jitter(
                multiplier=self.initial_delay, max=self.max_delay, jitter=self.initial_delay
            ),
            before_sleep=before_sleep,
            reraise=True,
        )


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` is worth a retry: an :class:`AgentError` marked transient."""
    return isinstance(exc, AgentError) and exc.transient


def retry_delay_ms(state: RetryCallState) -> int:
    """The backoff tenacity chose before the next attempt, in milliseconds."""
    return int((state.next_action.sleep if state.next_action else 0.0) * 1000)
