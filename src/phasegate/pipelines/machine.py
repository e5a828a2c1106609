"""How a pipeline run talks to its agent, written down as one state machine.

The stages themselves move on the state file (running, accepted, pending again after a
revision); this machine is about the *conversation*: what the agent was last told, and
what to do when its session ends or fails. :func:`step` is pure: the runner feeds it what
happened and carries out the :data:`Action` it returns.

::

    Resuming ──session started──▶ Working ◀──checked: instruct──┐
        │ failed: fresh session      │  ├──checked: hand over──▶ HandingOver
        ▼                            │  └──checked: over──────▶ Done
    Resuming (fresh)                 │
                                     └──ended, nothing done since the last check:
                                        continue the session once, then fail

A session that ends after the agent did something is checked first (``RunCheck``), then
ended again with nothing new to check.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

# -- states -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Working:
    """The agent works on ``instruction``, last checked at transcript position
    ``checked_at``; ``continued``: its session already ended once and was continued."""

    instruction: str
    checked_at: int = -1
    continued: bool = False


@dataclass(frozen=True, slots=True)
class Resuming:
    """A resumed run's first session, told ``prompt`` (a recap), continuing the saved
    session ``session_id`` (None: a fresh session); over once the agent starts a session."""

    prompt: str
    session_id: str | None


@dataclass(frozen=True, slots=True)
class HandingOver:
    """The current stage is settled; the next session starts with ``prompt`` (a new session
    per stage)."""

    prompt: str


@dataclass(frozen=True, slots=True)
class Done:
    """The run is over: the agent may stop."""


State = Working | Resuming | HandingOver | Done

# -- what happened ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SessionStarted:
    """The agent reported the start of a session."""


@dataclass(frozen=True, slots=True)
class Checked:
    """The stage was checked at transcript position ``at``: ``instruct`` the agent with
    ``text`` in this session, ``hand_over`` ``text`` to a new session, or the run is
    ``over`` (accepted, rejected)."""

    outcome: Literal["instruct", "hand_over", "over"]
    at: int
    text: str = ""


@dataclass(frozen=True, slots=True)
class SessionEnded:
    """The agent's session ended normally at transcript position ``at``; ``worked``: it said
    or did something since the last check; ``session_id``: the session it ran, if known."""

    at: int
    worked: bool
    session_id: str | None


@dataclass(frozen=True, slots=True)
class SessionFailed:
    """The agent's session failed at transcript position ``at`` with ``reason``;
    ``transient``: the retry policy runs another session; ``session_id``: the session to
    continue with a recap, if known."""

    at: int
    reason: str
    transient: bool
    session_id: str | None


Event = SessionStarted | Checked | SessionEnded | SessionFailed

# -- what to do ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Stay:
    """Nothing to do beyond taking the new state (after a failure: run the same request)."""


@dataclass(frozen=True, slots=True)
class RunCheck:
    """Check the stage now (the session ended), then end the session again."""


SessionKind = Literal["next", "again", "recap", "fresh"]
"""What a new session is told: ``next``, a new instruction (the next stage); ``again``, the
instruction the last session did not take up; ``recap``, where the run stands, after a
failure; ``fresh``, a resume's recap in a fresh session, the saved one having failed."""


@dataclass(frozen=True, slots=True)
class StartSession:
    """Run a session of ``kind`` told ``prompt``, continuing session ``resume`` (None: a
    fresh one); ``reason``: the failure behind a ``recap`` or a ``fresh`` session."""

    prompt: str
    kind: SessionKind
    resume: str | None = None
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Abandon:
    """The session ended with the stage still open and nothing new to tell it: the run ends
    as an error (a resume continues from there)."""


@dataclass(frozen=True, slots=True)
class Stop:
    """No more sessions: the run is over."""


@dataclass(frozen=True, slots=True)
class Raise:
    """The failure ends the run: let it propagate."""


Action = Stay | RunCheck | StartSession | Abandon | Stop | Raise


def step(state: State, event: Event) -> tuple[State, Action]:
    """The state after ``event``, and what the runner does next."""
    match state, event:
        case Resuming(prompt=prompt), SessionStarted():
            return Working(prompt), Stay()
        case _, Checked(outcome="instruct", at=at, text=text):
            return Working(text, checked_at=at), Stay()
        case _, Checked(outcome="hand_over", text=text):
            return HandingOver(text), Stay()
        case _, Checked(outcome="over"):
            return Done(), Stay()
        case _, SessionEnded() as ended:
            return _ended(state, ended)
        case _, SessionFailed() as failed:
            return _failed(state, failed)
    return state, Stay()


def _ended(state: State, ended: SessionEnded) -> tuple[State, Action]:
    match state:
        case Done():
            return state, Stop()
        case HandingOver(prompt=prompt):
            return Working(prompt, checked_at=ended.at), StartSession(prompt, "next")
        case _ if ended.worked:
            return state, RunCheck()
        case Working(instruction=instruction, continued=False) if ended.session_id:
            return replace(state, continued=True), StartSession(
                instruction, "again", ended.session_id
            )
    return Done(), Abandon()


def _failed(state: State, failed: SessionFailed) -> tuple[State, Action]:
    match state:
        case Done():
            return state, Stop()
        case Resuming(prompt=prompt, session_id=str()):
            fresh = StartSession(prompt, "fresh", reason=failed.reason)
            return Resuming(prompt, None), fresh
        case _ if not failed.transient:
            return state, Raise()
        case HandingOver(prompt=prompt):
            return Working(prompt, checked_at=failed.at), StartSession(prompt, "next")
        case Working(instruction=instruction) if failed.session_id:
            return state, StartSession(instruction, "recap", failed.session_id, failed.reason)
    return state, Stay()
