"""What a transcript says about its run as a whole: the session, and the last word."""

from __future__ import annotations

from phasegate.evidence.transcript import (
    AssistantText,
    RunResult,
    SessionStart,
    ToolResult,
    Transcript,
    UserText,
)


def test_the_final_message_is_the_last_result_text() -> None:
    transcript = Transcript(
        entries=(
            AssistantText(text="working"),
            RunResult(text="first done"),
            AssistantText(text="more"),
            RunResult(text="all done"),
            RunResult(text=None),
        )
    )

    assert transcript.final_message == "all done"


def test_without_result_text_the_final_message_is_the_last_assistant_text() -> None:
    """Text the agent was told, or a tool gave back, is not the model's word."""
    transcript = Transcript(
        entries=(
            AssistantText(text="one"),
            AssistantText(text="two"),
            UserText(text="feedback"),
            ToolResult(tool_use_id="t", ok=True, content="tool text"),
            RunResult(text=""),
        )
    )

    assert transcript.final_message == "two"
    assert Transcript(entries=(UserText(text="prompt"),)).final_message is None


def test_half_a_surrogate_pair_in_the_final_message_becomes_a_replacement_character() -> None:
    """A transcript's JSON may escape half a pair; the report must still encode as UTF-8."""
    transcript = Transcript(entries=(AssistantText(text="cut \ud83d here \ud83d\ude00"),))

    assert transcript.final_message == "cut \ufffd here \ufffd\ufffd"
    assert Transcript(entries=(AssistantText(text="ok 😀"),)).final_message == "ok 😀"


def test_the_session_id_is_the_latest_one_reported() -> None:
    transcript = Transcript(
        entries=(
            SessionStart(session_id="first"),
            SessionStart(session_id=None),
            SessionStart(session_id="second"),
            SessionStart(session_id=None),
        )
    )

    assert transcript.session_id == "second"
    assert Transcript().session_id is None
