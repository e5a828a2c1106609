"""The conversation's state machine (phasegate.pipelines.machine): every transition."""

from __future__ import annotations

import pytest

from phasegate.pipelines.machine import (
    Abandon,
    Checked,
    Done,
    HandingOver,
    Raise,
    Resuming,
    RunCheck,
    SessionEnded,
    SessionFailed,
    SessionStarted,
    StartSession,
    State,
    Stay,
    Stop,
    Working,
    step,
)

SID = "session-1"


def _ended(*, worked: bool = False, session_id: str | None = SID, at: int = 9) -> SessionEnded:
    return SessionEnded(at=at, worked=worked, session_id=session_id)


def _failed(*, transient: bool, session_id: str | None = SID) -> SessionFailed:
    return SessionFailed(at=7, reason="HTTP 529", transient=transient, session_id=session_id)


@pytest.mark.parametrize(
    "state",
    [Working("fix it"), Resuming("recap", SID), HandingOver("stage two"), Done()],
    ids=["working", "resuming", "handing-over", "done"],
)
@pytest.mark.parametrize(
    ("checked", "expected"),
    [
        (Checked("instruct", 5, "feedback"), Working("feedback", checked_at=5)),
        (Checked("hand_over", 5, "stage two"), HandingOver("stage two")),
        (Checked("over", 5), Done()),
    ],
    ids=["instruct", "hand-over", "over"],
)
def test_a_check_decides_the_next_state_whatever_came_before(
    state: State, checked: Checked, expected: State
) -> None:
    """The stage's own verdict is what counts: instruct, hand over, or the run is over."""
    assert step(state, checked) == (expected, Stay())


def test_a_resume_becomes_ordinary_work_on_its_recap_once_a_session_starts() -> None:
    assert step(Resuming("recap", SID), SessionStarted()) == (Working("recap"), Stay())


@pytest.mark.parametrize("state", [Working("fix it"), HandingOver("next"), Done()])
def test_a_session_start_changes_nothing_outside_a_resume(state: State) -> None:
    assert step(state, SessionStarted()) == (state, Stay())


def test_a_session_that_ended_after_doing_work_is_checked_first() -> None:
    state = Working("fix it", checked_at=3)
    assert step(state, _ended(worked=True)) == (state, RunCheck())


def test_a_session_that_ended_without_taking_up_its_instruction_is_continued_once() -> None:
    """First end: continue the same session with the same instruction; second: give up."""
    state, action = step(Working("fix it", checked_at=3), _ended())
    assert action == StartSession("fix it", "again", resume=SID)
    assert state == Working("fix it", checked_at=3, continued=True)
    assert step(state, _ended()) == (Done(), Abandon())


def test_a_session_that_cannot_be_continued_is_abandoned() -> None:
    """No session id to continue: the run ends as an error a resume can pick up."""
    assert step(Working("fix it"), _ended(session_id=None)) == (Done(), Abandon())


def test_a_new_check_gives_the_session_another_continuation() -> None:
    """Continuing is bounded per instruction, not per run."""
    continued = Working("fix it", continued=True)
    state, _ = step(continued, Checked("instruct", 12, "try again"))
    assert step(state, _ended())[1] == StartSession("try again", "again", resume=SID)


def test_a_hand_over_starts_the_next_session_with_the_next_prompt() -> None:
    state, action = step(HandingOver("stage two"), _ended(at=20))
    assert action == StartSession("stage two", "next")
    assert state == Working("stage two", checked_at=20)


def test_a_finished_run_starts_no_session_after_an_end_or_a_failure() -> None:
    assert step(Done(), _ended(worked=True)) == (Done(), Stop())
    assert step(Done(), _failed(transient=True)) == (Done(), Stop())


def test_a_resume_whose_idle_session_ended_is_abandoned() -> None:
    assert step(Resuming("recap", SID), _ended()) == (Done(), Abandon())


@pytest.mark.parametrize("transient", [True, False])
def test_a_saved_session_that_fails_to_resume_gives_way_to_a_fresh_one(transient: bool) -> None:
    """Any failure of the saved session: same recap, fresh session, reason kept for the event."""
    state, action = step(Resuming("recap", SID), _failed(transient=transient))
    assert state == Resuming("recap", None)
    assert action == StartSession("recap", "fresh", reason="HTTP 529")


def test_a_fresh_resume_that_fails_is_retried_as_it_was_or_raised() -> None:
    fresh = Resuming("recap", None)
    assert step(fresh, _failed(transient=True)) == (fresh, Stay())
    assert step(fresh, _failed(transient=False)) == (fresh, Raise())


def test_a_transient_failure_continues_the_session_with_a_recap() -> None:
    state = Working("fix it", checked_at=4)
    action = StartSession("fix it", "recap", resume=SID, reason="HTTP 529")
    assert step(state, _failed(transient=True)) == (state, action)


def test_a_transient_failure_before_any_session_reruns_the_same_request() -> None:
    state = Working("fix it")
    assert step(state, _failed(transient=True, session_id=None)) == (state, Stay())


def test_a_transient_failure_while_handing_over_starts_the_next_session() -> None:
    """The stage is settled; the failed session has nothing left to do."""
    state, action = step(HandingOver("stage two"), _failed(transient=True))
    assert (state, action) == (
        Working("stage two", checked_at=7),
        StartSession("stage two", "next"),
    )


@pytest.mark.parametrize("state", [Working("fix it"), HandingOver("stage two")])
def test_a_failure_the_retry_policy_gave_up_on_ends_the_run(state: State) -> None:
    assert step(state, _failed(transient=False)) == (state, Raise())
