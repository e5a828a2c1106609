"""Which phase each tool call of a task run belongs to, and when its ``tool.called`` event can
go out.

A call belongs to the phase whose window holds it, exactly as the run report counts it: where
the call was made, not where its result arrived (a result may come after a marker printed in
the same message). Windows end at the *last* claim of each phase, so a call made after a
premature claim moves back into that phase when the agent claims it again. A call's event
therefore waits while a phase before the one it is in now is not accepted yet (it may still be
claimed again), and goes out, with the phase the windows then give, as soon as a new claim or
judgment settles it, or when the run ends. A call in phase 1, or made after every earlier
phase was accepted, goes out at once; events always go out in the order the results came.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from phasegate.evidence.transcript import ToolCall, ToolResult
from phasegate.telemetry.events import ToolCalled
from phasegate.validators.judge import Judgment


class _Window(Protocol):
    """A phase's window of the transcript: entries ``[start, end)``."""

    @property
    def index(self) -> int: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...


@dataclass(frozen=True, slots=True)
class _Returned:
    """A tool result whose ``tool.called`` event has not gone out yet."""

    result: ToolResult
    tool: str | None
    position: int
    """Where its call stands in the transcript (the result's own place if no call was seen)."""
    phase: int
    """The phase the agent was on when it made the call."""


class CallPhases:
    """The phase of every tool call of one run, and the events that are ready to go out."""

    def __init__(self) -> None:
        self._made: dict[str, tuple[int, int]] = {}
        """Position and phase of each call, by call id."""
        self._waiting: list[_Returned] = []
        self._windows: Sequence[_Window] = ()
        self._accepted: frozenset[int] = frozenset()
        """The phases the latest judgment accepted."""

    def made(self, call: ToolCall, position: int, phase: int) -> None:
        """A call was made at transcript ``position`` while the agent was on ``phase``."""
        self._made[call.id] = (position, phase)

    def returned(
        self, result: ToolResult, tool: str | None, position: int, phase: int
    ) -> Iterator[ToolCalled]:
        """``result`` arrived at ``position`` (the agent on ``phase``): the events ready now."""
        at, made_in = self._made.get(result.tool_use_id, (position, phase))
        self._waiting.append(_Returned(result, tool, at, made_in))
        return self._ready(final=False)

    def cut(self, windows: Sequence[_Window]) -> Iterator[ToolCalled]:
        """The transcript's windows as they stand after a new claim: the events now ready."""
        self._windows = windows
        return self._ready(final=False)

    def judged(self, judgment: Judgment) -> Iterator[ToolCalled]:
        """A judgment of the whole transcript so far: the events now ready."""
        self._windows = judgment.phases
        self._accepted = frozenset(p.index for p in judgment.phases if p.accepted)
        return self._ready(final=False)

    def finished(self, judgment: Judgment) -> Iterator[ToolCalled]:
        """The run's final judgment (the report's): every event still waiting, with the phase
        the report counts it under."""
        self._windows = judgment.phases
        return self._ready(final=True)

    def _ready(self, *, final: bool) -> Iterator[ToolCalled]:
        while self._waiting:
            returned = self._waiting[0]
            phase = self._phase_of(returned)
            if not final and not all(p in self._accepted for p in range(1, phase)):
                return  # an earlier phase may still be claimed again and take this call
            self._waiting.pop(0)
            yield ToolCalled(
                phase=phase,
                tool=returned.tool,
                tool_use_id=returned.result.tool_use_id,
                ok=returned.result.ok,
            )

    def _phase_of(self, returned: _Returned) -> int:
        """The phase whose window holds the call; the phase it was made in when the windows
        were cut before it."""
        for window in self._windows:
            if window.start <= returned.position < window.end:
                return window.index
        return returned.phase
