"""Script replies for subagents: each conversation (the main one, each subagent's) keeps its
own place in the script, whatever order their requests come in, and one the script has no
reply for is said, not skipped."""

from __future__ import annotations

from phasegate.agents.scripted.script import Script, ScriptCursor

SCRIPT = Script.model_validate(
    {
        "replies": [
            {"text": "main 1"},
            {"agent": "helper", "text": "helper 1"},
            {"text": "main 2"},
            {"agent": "helper", "when": "tool_result", "text": "helper 2"},
        ]
    }
)


def test_each_conversation_takes_its_own_replies_in_any_order_of_requests() -> None:
    cursor = ScriptCursor(SCRIPT)

    said = [
        cursor.next_reply("start", agent="helper"),
        cursor.next_reply("start"),
        cursor.next_reply("tool_result", agent="helper"),
        cursor.next_reply("user"),
    ]

    assert [r.text if r else None for r in said] == ["helper 1", "main 1", "helper 2", "main 2"]
    assert cursor.exhausted and cursor.unmatched == []


def test_a_reply_for_a_subagent_never_answers_the_main_conversation() -> None:
    """The in-process scripted agent has no subagents: it sees only the main replies, and a
    script whose main replies are used up is finished for it, unmatched nowhere."""
    cursor = ScriptCursor(SCRIPT)

    said = [cursor.next_reply("start"), cursor.next_reply("user"), cursor.next_reply("user")]

    assert [r.text if r else None for r in said] == ["main 1", "main 2", None]
    assert not cursor.left_for(None) and cursor.left_for("helper")
    assert cursor.unmatched == []


def test_a_subagent_with_no_reply_in_the_script_is_unmatched_by_name() -> None:
    cursor = ScriptCursor(SCRIPT)

    assert cursor.next_reply("start", "Look around.", agent="explorer") is None

    (unmatched,) = cursor.unmatched
    assert (unmatched.agent, unmatched.reply) == ("explorer", 0)
    assert unmatched.describe().startswith(
        "no script reply is for the conversation of subagent 'explorer'"
    )


def test_an_unmatched_subagent_request_names_the_reply_it_expected() -> None:
    cursor = ScriptCursor(SCRIPT)
    cursor.next_reply("start", agent="helper")

    assert cursor.next_reply("user", "more?", agent="helper") is None

    (unmatched,) = cursor.unmatched
    assert unmatched.reply == 4
    assert unmatched.expected == "agent: 'helper', when: tool_result"
