"""The completion tools as the model sees them (phasegate.prompts.completion_tools)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from phasegate.phases.completion import Completion
from phasegate.phases.model import Phase, Task
from phasegate.prompts.completion_tools import ToolAnswer, completion_tools, success_answer

SCHEMA = {"type": "object", "required": ["ok"], "properties": {"ok": {"type": "boolean"}}}
ATTEMPTED = {"tool": "phase_complete", "phase": 1, "note": "edited"}


def in_mode(task: Task, completion: Completion) -> Task:
    """``task`` with another completion mode."""
    return task.model_copy(update={"completion": completion})


def names(task: Task) -> list[str]:
    """The short names of the tools ``task`` offers."""
    return [tool.name for tool in completion_tools(task)]


def keys_anywhere(schema: object) -> set[str]:
    """Every key used at any depth of a JSON Schema."""
    if isinstance(schema, dict):
        return set(schema) | {k for value in schema.values() for k in keys_anywhere(value)}
    if isinstance(schema, list):
        return {k for value in schema for k in keys_anywhere(value)}
    return set()


# ---- completion_tools ----------------------------------------------------------------------


def test_marker_mode_offers_no_tools(three_phase_task: Task) -> None:
    """Typed markers and printed JSON only: nothing to call."""
    assert completion_tools(in_mode(three_phase_task, "marker")) == ()


@pytest.mark.parametrize("completion", ["tool", "either"])
def test_a_task_with_work_and_output_phases_offers_both_tools(
    three_phase_task: Task, completion: Completion
) -> None:
    """phase_complete for the work phases, submit_summary for the output phase."""
    assert names(in_mode(three_phase_task, completion)) == ["phase_complete", "submit_summary"]


def test_phase_complete_is_only_offered_with_work_phases() -> None:
    """A task that is only an output phase has nothing to mark complete."""
    task = Task(
        name="t",
        completion="tool",
        phases=(Phase(name="answer", instructions="Answer.", output_schema=SCHEMA),),
    )

    assert names(task) == ["submit_summary"]


def test_submit_summary_is_only_offered_with_an_output_phase() -> None:
    """Without an output phase there is no answer to hand in."""
    task = Task(
        name="t",
        completion="tool",
        phases=(Phase(name="a", instructions="x"), Phase(name="b", instructions="y")),
    )

    (tool,) = completion_tools(task)

    assert tool.name == "phase_complete"
    assert tool.description.endswith("Work phases: 1 = a; 2 = b.")


def test_phase_complete_lists_the_work_phases_only(three_phase_task: Task) -> None:
    """The output phase's number is not offered for phase_complete."""
    phase_complete, _ = completion_tools(three_phase_task)

    assert phase_complete.description.endswith("Work phases: 1 = edit; 2 = verify.")


def test_submit_summary_spells_out_the_output_schema(three_phase_task: Task) -> None:
    """The schema lives in the description, compact, so the input schema can stay loose."""
    _, submit_summary = completion_tools(three_phase_task)
    assert three_phase_task.output_phase is not None
    schema = three_phase_task.output_phase.output_schema

    compact = json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
    assert f"must satisfy this JSON Schema: {compact}." in submit_summary.description
    assert submit_summary.description.startswith("Hand in the answer of phase 3 (summary), ")


def test_no_input_schema_requires_anything(three_phase_task: Task) -> None:
    """The runtime refuses input that breaks a tool's schema with a plain message, before
    phasegate sees it; so nothing is required and phasegate answers every problem itself."""
    tools = completion_tools(three_phase_task)

    assert [tool.input_schema["type"] for tool in tools] == ["object", "object"]
    assert [sorted(tool.input_schema["properties"]) for tool in tools] == [
        ["note", "phase"], ["summary"]
    ]  # fmt: skip
    for tool in tools:
        assert "required" not in keys_anywhere(tool.input_schema), tool.name


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("phase_complete", {}),
        ("phase_complete", {"phase": 1, "note": "edited"}),
        ("phase_complete", {"phase": "1"}),
        ("submit_summary", {}),
        ("submit_summary", {"summary": {"ok": True}}),
        ("submit_summary", {"summary": '{"ok": true}'}),
    ],
    ids=["no-phase", "int-phase", "quoted-phase", "no-summary", "object", "json-string"],
)
def test_every_input_phasegate_answers_itself_passes_the_input_schema(
    three_phase_task: Task, tool: str, arguments: dict[str, Any]
) -> None:
    """The SDK's MCP server validates arguments against the input schema before the handler
    runs; a quoted phase or a summary sent as a JSON string must reach phasegate, which
    accepts both."""
    schema = next(t.input_schema for t in completion_tools(three_phase_task) if t.name == tool)

    jsonschema.validate(instance=arguments, schema=schema)


# ---- success_answer ------------------------------------------------------------------------


def test_success_for_a_middle_phase_points_at_the_next_work_phase(three_phase_task: Task) -> None:
    """The action names the next phase and how to complete it in the task's mode."""
    answer = success_answer(three_phase_task, ATTEMPTED, 1)

    assert answer == ToolAnswer(
        True,
        {
            "result": "success",
            "attempted": ATTEMPTED,
            "action": "Phase 1 is complete. Go on with phase 2 (verify): do its work, then call "
            "phase_complete(phase=2, note=...) (or print 'PHASE 2 COMPLETE: Tests pass').",
        },
    )
    assert list(answer.data) == ["result", "attempted", "action"]
    assert json.loads(answer.text) == answer.data


def test_success_in_tool_mode_only_mentions_the_tool(three_phase_task: Task) -> None:
    """No marker line is offered when markers would not count."""
    answer = success_answer(in_mode(three_phase_task, "tool"), ATTEMPTED, 1)

    assert answer.data["action"] == (
        "Phase 1 is complete. Go on with phase 2 (verify): do its work, then call "
        "phase_complete(phase=2, note=...)."
    )


@pytest.mark.parametrize(
    ("completion", "how"),
    [
        ("either", "call submit_summary(summary=...) with the object or print the object in a "
                   "```json block"),
        ("tool", "call submit_summary(summary=...) with the object"),
    ],
)  # fmt: skip
def test_success_before_the_output_phase_says_how_to_answer(
    three_phase_task: Task, completion: Completion, how: str
) -> None:
    """After the last work phase comes the answer, not more work."""
    answer = success_answer(in_mode(three_phase_task, completion), ATTEMPTED, 2)

    assert answer.data["action"] == (f"Phase 2 is complete. Go on with phase 3 (summary): {how}.")


def test_success_for_the_output_phase_ends_the_turn(three_phase_task: Task) -> None:
    """The accepted answer completes the task."""
    attempted: dict[str, Any] = {"tool": "submit_summary", "summary_fields": ["description"]}

    answer = success_answer(three_phase_task, attempted, 3)

    assert answer.ok
    assert answer.data == {
        "result": "success",
        "attempted": attempted,
        "action": "The answer is accepted and every phase is complete. End your turn now.",
    }


def test_success_for_the_last_phase_of_a_task_without_output_ends_the_turn() -> None:
    """Work phases only: completing the last one completes the task."""
    task = Task(name="t", phases=(Phase(name="a", instructions="x"),))

    answer = success_answer(task, ATTEMPTED, 1)

    assert answer.data["action"] == "Every phase is complete. End your turn now."
