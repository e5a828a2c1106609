"""Script replies for subagents and graders: each conversation (the main one, each
subagent's, the grader's) keeps its own place in the script, whatever order their requests
come in, and one the script has no reply for is said, not skipped."""

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


GRADED = Script.model_validate(
    {
        "replies": [
            {"text": "main 1"},
            {"grader": True, "text": "grader 1"},
            {"text": "main 2"},
            {"grader": True, "when": "tool_result", "text": "grader 2"},
            {"grader": True, "text": "grader 3"},
        ]
    }
)


def test_the_main_conversation_passes_over_the_grader_replies() -> None:
    """Grader replies sit between the main ones; the main conversation never takes one,
    and once its own are used it is finished, not unmatched."""
    cursor = ScriptCursor(GRADED)

    said = [cursor.next_reply("start"), cursor.next_reply("user"), cursor.next_reply("user")]

    assert [r.text if r else None for r in said] == ["main 1", "main 2", None]
    assert cursor.unmatched == [] and cursor.left_for(None, grader=True)


def test_the_grader_keeps_one_place_across_its_sessions_and_apart_from_the_others() -> None:
    """A second grader session (a new ``start``) goes on after the reply the first used,
    whatever the main conversation and the subagents did meanwhile."""
    cursor = ScriptCursor(GRADED)

    said = [
        cursor.next_reply("start", grader=True),  # the first grader session
        cursor.next_reply("start"),
        cursor.next_reply("tool_result", grader=True),
        cursor.next_reply("start", "Look.", agent="helper"),  # unmatched: no reply for it
        cursor.next_reply("start", grader=True),  # the second grader session
        cursor.next_reply("user"),
    ]

    assert [r.text if r else None for r in said] == [
        "grader 1", "main 1", "grader 2", None, "grader 3", "main 2"
    ]  # fmt: skip
    assert cursor.exhausted and [u.agent for u in cursor.unmatched] == ["helper"]


def test_a_grader_request_with_no_grader_reply_left_is_unmatched_and_says_so() -> None:
    """Unlike the main conversation, a grader that outlives its replies is not simply done:
    it must give verdicts, so its request is listed and described."""
    cursor = ScriptCursor(Script.model_validate({"replies": [{"text": "main 1"}]}))

    assert cursor.next_reply("start", "You are phasegate's grader. Judge.", grader=True) is None

    (unmatched,) = cursor.unmatched
    assert (unmatched.grader, unmatched.agent, unmatched.reply) == (True, None, 0)
    assert unmatched.describe() == (
        "no script reply is left for the grader's conversation (a reply with grader: true); "
        'its request held start: "You are phasegate\'s grader. Judge."'
    )
    assert cursor.next_reply("start") is not None  # the main list is untouched


def test_a_grader_request_no_grader_reply_matches_names_the_one_expected() -> None:
    """Grader replies left, none matching: the reply the grader's conversation expected."""
    waiting = {"grader": True, "when": "tool_error", "text": "again"}
    cursor = ScriptCursor(Script.model_validate({"replies": [{"text": "main 1"}, waiting]}))

    assert cursor.next_reply("start", "You are phasegate's grader.", grader=True) is None

    (unmatched,) = cursor.unmatched
    assert (unmatched.grader, unmatched.reply) == (True, 2)
    assert unmatched.expected == "grader: true, when: tool_error"
    assert unmatched.describe().startswith("script reply 2 (grader: true, when: tool_error)")


WORKFLOW_SCRIPT = Script.model_validate(
    {
        "replies": [
            {"text": "main 1"},
            {"workflow": "edit", "text": "edit 1"},
            {"workflow": "review", "text": "review 1"},
            {"workflow": "edit", "when": "tool_result", "text": "edit 2"},
            {"when": "user", "text": "main 2"},
        ]
    }
)


def test_each_workflow_agent_takes_its_own_replies_in_any_order_of_requests() -> None:
    cursor = ScriptCursor(WORKFLOW_SCRIPT)

    said = [
        cursor.next_reply("start", workflow="review"),
        cursor.next_reply("start"),
        cursor.next_reply("start", workflow="edit"),
        cursor.next_reply("tool_result", workflow="edit"),
        cursor.next_reply("user"),
    ]

    assert [r.text if r else None for r in said] == [
        "review 1", "main 1", "edit 1", "edit 2", "main 2"
    ]  # fmt: skip
    assert cursor.exhausted and cursor.unmatched == []


def test_a_workflow_reply_never_answers_the_main_conversation_or_a_subagent() -> None:
    cursor = ScriptCursor(WORKFLOW_SCRIPT)

    said = [cursor.next_reply("start"), cursor.next_reply("user"), cursor.next_reply("user")]

    assert [r.text if r else None for r in said] == ["main 1", "main 2", None]
    assert cursor.left_for(None, workflow="edit") and not cursor.left_for("edit")
    assert cursor.unmatched == []


def test_a_workflow_agent_with_no_reply_in_the_script_is_unmatched_by_label() -> None:
    cursor = ScriptCursor(WORKFLOW_SCRIPT)

    assert cursor.next_reply("start", "Check the docs.", workflow="docs") is None

    (unmatched,) = cursor.unmatched
    assert (unmatched.reply, unmatched.workflow, unmatched.agent) == (0, "docs", None)
    assert unmatched.describe().startswith(
        "no script reply is for the conversation of workflow agent 'docs' (a reply with "
        "workflow: 'docs')"
    )


def test_a_workflow_agent_whose_replies_are_used_up_is_unmatched_at_the_one_left() -> None:
    cursor = ScriptCursor(WORKFLOW_SCRIPT)
    cursor.next_reply("start", workflow="edit")

    assert cursor.next_reply("user", "More?", workflow="edit") is None

    (unmatched,) = cursor.unmatched
    assert (unmatched.reply, unmatched.expected) == (4, "workflow: 'edit', when: tool_result")
