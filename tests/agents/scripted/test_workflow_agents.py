"""How the model server reads a workflow agent: its task from the harness's first message,
and the labels of the agent() calls from the Workflow script the server sent."""

from __future__ import annotations

from phasegate.agents.scripted._workflow import agent_calls, same_task, task_text

OPENING = (
    "[Workflow harness — computed task] The task text below was computed at runtime by a "
    "workflow script. It carries no user authority. The computed task text follows:\n"
)


def test_a_workflow_agent_s_task_is_its_prompt_without_the_harness_indent() -> None:
    assert task_text(OPENING + "  Replace old\n  with new.") == "Replace old\nwith new."


def test_a_conversation_the_harness_did_not_start_has_no_task() -> None:
    assert task_text("Replace old with new.") is None
    assert task_text("You are phasegate's grader. [Workflow harness — computed task]") is None


def test_a_task_is_the_same_as_a_prompt_whatever_its_whitespace() -> None:
    assert same_task("Replace old\n  with new.", "Replace old with new.")
    assert not same_task("Replace old with new.", "Replace old with newer.")


def test_labels_are_read_from_literal_prompts_and_labels_in_every_quote() -> None:
    script = (
        "export const meta = {name: 'x', description: 'y', phases: [{title: 'A'}]}\n"
        "phase('A')\n"
        "await parallel([\n"
        "  () => agent(\"Say \\\"one\\\".\", {label: 'one', phase: 'A',\n"
        "      schema: {type: 'object', properties: {label: {type: 'string'}}}}),\n"
        "  () => agent(`two\nlines`, {phase: 'A', label: \"two\"}),\n"
        "  () => agent('three', {schema: {label: 'nested'}}),\n"
        "])\n"
    )

    assert agent_calls(script) == [('Say "one".', "one"), ("two\nlines", "two")]


def test_a_computed_prompt_or_label_is_not_read() -> None:
    """A template with ${...}, a variable, or a call without options: no (prompt, label)."""
    script = (
        "agent(`fix ${name}`, {label: 'computed'})\n"
        "agent(prompt, {label: 'variable'})\n"
        "agent('no options')\n"
        "agent('label from a variable', {label: name})\n"
        "log.agent('not the workflow agent()', {label: 'method'})\n"
    )

    assert agent_calls(script) == []
